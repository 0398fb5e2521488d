//! Spec §12, nesting group (§9): R38–R39.

use tpack::Rule::*;

use super::model::*;
use super::Case;

pub fn cases() -> Vec<Case> {
    vec![
        // R38
        invalid(NestingTooDeep, "depth-9", "containers nested 9 deep", nested_chain(10)),
        invalid(
            NestingTooDeep,
            "garbage-at-depth-9",
            "a depth-8 container whose CONTAINER payload is not even a container",
            wrapped(of_entries(vec![container("deeper", pattern(64, 3))]), 8),
        ),
        // R39
        invalid(
            NestedInvalid,
            "bad-magic",
            "a CONTAINER entry whose payload is not a container",
            model(|r| r.entries.push(container("sub", pattern(200, 1)))),
        ),
        invalid(
            NestedInvalid,
            "inner-rule",
            "a nested container with a duplicate name",
            model(|r| {
                let mut inner = base();
                inner.entries[5].name = b"embed.weight".to_vec();
                r.entries.push(container("sub", inner.encode()));
            }),
        ),
    ]
}
