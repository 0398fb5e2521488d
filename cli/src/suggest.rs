//! "Did you mean …?": the known names closest to one that matched none, by edit distance, for messages about
//! a mistyped entry name, manifest field or dtype.

/// At most this many names are suggested.
const MAX_SUGGESTIONS: usize = 3;

/// The largest edit distance at which a name of `len` characters still counts as a near miss: one edit per
/// three characters, at least one. Farther names are other names, not typos.
fn max_distance(len: usize) -> usize {
    (len / 3).max(1)
}

/// The edit distance between `a` and `b` in characters: insertions, deletions, substitutions and swaps of two
/// adjacent characters, each costing 1 (the optimal-string-alignment form of Damerau–Levenshtein).
#[must_use]
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows of the dynamic programme: the row before the previous one is needed for swaps.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current: Vec<usize> = vec![0; b.len() + 1];
    for (i, &ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitute = previous[j] + usize::from(ca != cb);
            let mut best = substitute.min(previous[j + 1] + 1).min(current[j] + 1);
            if i > 0 && j > 0 && ca == b[j - 1] && a[i - 1] == cb {
                best = best.min(before[j - 1] + 1);
            }
            current[j + 1] = best;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// The names among `candidates` closest to `wanted`: those at the smallest distance, if that is a near miss,
/// at most [`MAX_SUGGESTIONS`] of them in candidate order.
#[must_use]
pub fn closest<'a>(wanted: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let len = wanted.chars().count();
    let limit = max_distance(len);
    let mut near: Vec<(usize, usize, &str)> = candidates
        .into_iter()
        .enumerate()
        // A name whose length differs by more than the limit is farther than it: skip the distance.
        .filter(|(_, c)| c.chars().count().abs_diff(len) <= limit)
        .map(|(order, c)| (distance(wanted, c), order, c))
        .filter(|&(d, _, c)| d <= limit && c != wanted)
        .collect();
    near.sort_unstable();
    let best = near.first().map(|&(d, _, _)| d);
    near.into_iter()
        .take_while(|&(d, _, _)| Some(d) == best)
        .take(MAX_SUGGESTIONS)
        .map(|(_, _, c)| c)
        .collect()
}

/// `did you mean "a"?` (or `"a" or "b"`, `"a", "b" or "c"`) for the [`closest`] candidates, with `prefix`
/// before it; empty when none is close.
#[must_use]
pub fn did_you_mean<'a>(prefix: &str, wanted: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let names: Vec<String> = closest(wanted, candidates).into_iter().map(|c| format!("{c:?}")).collect();
    let list = match names.split_last() {
        None => return String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    };
    format!("{prefix}did you mean {list}?")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_counts_each_kind_of_edit_once() {
        assert_eq!(distance("", ""), 0);
        assert_eq!(distance("abc", ""), 3);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("shape", "shape"), 0);
        assert_eq!(distance("shap", "shape"), 1); // insertion
        assert_eq!(distance("shapes", "shape"), 1); // deletion
        assert_eq!(distance("shope", "shape"), 1); // substitution
        assert_eq!(distance("shpae", "shape"), 1); // adjacent swap
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("layers.0.q", "layers.1.q"), 1);
        // Characters, not bytes: one substitution of a two-byte character.
        assert_eq!(distance("größe", "grösse"), 2);
        assert_eq!(distance("é", "e"), 1);
    }

    #[test]
    fn near_misses_are_suggested_closest_first() {
        let names = ["layers.0.attn.q.weight", "layers.0.attn.k.weight", "layers.1.attn.q.weight", "embed"];
        assert_eq!(closest("layers.0.attn.q.weigth", names), ["layers.0.attn.q.weight"]);
        // Only the closest: k.weight is two edits away, the others one.
        assert_eq!(
            closest("layers.2.attn.q.weight", names),
            ["layers.0.attn.q.weight", "layers.1.attn.q.weight"]
        );
        assert_eq!(closest("Embed", names), ["embed"]);
        // Far from everything: nothing.
        assert!(closest("tok_embeddings", names).is_empty());
        // The name itself is not a suggestion for itself.
        assert!(closest("embed", ["embed"]).is_empty());
        // One edit is always a near miss, even for short names.
        assert_eq!(closest("w", ["b", "ww", "xyz"]), ["b", "ww"]);
        assert_eq!(closest("x", ["a", "b", "c", "d"]), ["a", "b", "c"]);
        assert_eq!(closest("F31", ["F32", "F16", "I32"]), ["F32"]);
    }

    #[test]
    fn did_you_mean_lists_one_two_or_three() {
        assert_eq!(did_you_mean("; ", "shap", ["shape", "name"]), "; did you mean \"shape\"?");
        assert_eq!(did_you_mean("; ", "a.x", ["a.y", "a.z"]), "; did you mean \"a.y\" or \"a.z\"?");
        assert_eq!(
            did_you_mean(": ", "ab", ["a", "b", "abc", "abd"]),
            ": did you mean \"a\", \"b\" or \"abc\"?"
        );
        assert_eq!(did_you_mean("; ", "zzzz", ["shape"]), "");
    }
}
