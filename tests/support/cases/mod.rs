//! Every golden vector: valid containers covering each feature (`valid`), and one or more invalid containers
//! per rule of spec §12, one module per validation group of §12 in its order, each holding its rules' cases
//! in rule-number order. `spec/vectors/` and its manifest are generated from this list in this order (see
//! tests/vectors.rs), and tests/rules.rs runs one test per rule over it.

#![allow(dead_code)]

mod model;

mod valid;

// One module per group of spec §12, named after its first rule, listed in the spec's order (the extension
// group's rules, R51–R52, came with format 1.1 and are checked after the checksums).
mod r01_header;
mod r10_sections;
mod r13_checksums;
mod r15_names;
mod r22_entries;
mod r33_payloads;
mod r38_nesting;
mod r40_metadata;
mod r50_integrity;
mod r51_extension;
pub mod signature;

use tpack::Rule;

#[allow(unused_imports)] // Not every test binary builds its own model.
pub use model::base;

#[derive(Clone)]
pub struct Case {
    /// File name without extension; invalid ones start with their rule id.
    pub name: String,
    /// `None` for a valid container.
    pub rule: Option<Rule>,
    pub description: &'static str,
    pub bytes: Vec<u8>,
    /// For a valid container: verifications of its signature (spec §14) with a key set and a policy, and the
    /// verdict each must give.
    pub checks: Vec<signature::Check>,
}

/// Built once per test binary: under Miri, building them for every test would dominate the run.
static UNSIGNED_VALID: std::sync::LazyLock<Vec<Case>> = std::sync::LazyLock::new(valid::cases);
static VALID: std::sync::LazyLock<Vec<Case>> =
    std::sync::LazyLock::new(|| UNSIGNED_VALID.iter().cloned().chain(signature::valid_cases()).collect());
static INVALID: std::sync::LazyLock<Vec<Case>> = std::sync::LazyLock::new(|| {
    let groups = [
        r01_header::cases,
        r10_sections::cases,
        r13_checksums::cases,
        r51_extension::cases,
        r15_names::cases,
        r22_entries::cases,
        r33_payloads::cases,
        r38_nesting::cases,
        r40_metadata::cases,
        signature::invalid_cases,
        r50_integrity::cases,
    ];
    let groups: Vec<Vec<Case>> = groups.iter().map(|group| group()).collect();
    for group in &groups {
        let numbers: Vec<u32> = group.iter().map(|c| u32::from(c.rule.unwrap().number())).collect();
        assert!(numbers.is_sorted(), "invalid cases of a group out of rule order: {numbers:?}");
    }
    groups.into_iter().flatten().collect()
});

pub fn all() -> impl Iterator<Item = &'static Case> {
    VALID.iter().chain(INVALID.iter())
}

pub fn valid_cases() -> &'static [Case] {
    &VALID
}

/// The valid cases without the signed ones: under Miri, where the signed ones are read from the manifest (a
/// minute and a half there), for the tests that would skip them anyway.
pub fn unsigned_valid_cases() -> &'static [Case] {
    &UNSIGNED_VALID
}

pub fn invalid_cases() -> &'static [Case] {
    &INVALID
}
