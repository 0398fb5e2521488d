//! `--filter`: which entry names a pattern selects.

/// Whether `name` matches `pattern`: a glob over the whole name when the pattern has `*` (any run of
/// characters, separators included) or `?` (one character), else a substring.
#[must_use]
pub fn name_matches(pattern: &str, name: &str) -> bool {
    if !pattern.contains(['*', '?']) {
        return name.contains(pattern);
    }
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // The classic linear-backtracking glob: on a mismatch, retry from the last `*` one character later.
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some(&c) if c == '?' || c == n[ni] => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_substrings_or_whole_name_globs() {
        assert!(name_matches("attn", "h.0.attn.q"));
        assert!(!name_matches("attn", "h.0.mlp"));
        assert!(name_matches("h.*.attn.*", "h.10.attn.q"));
        assert!(!name_matches("*.bias", "h.0.bias.x"));
        assert!(name_matches("h.?.w", "h.1.w") && !name_matches("h.?.w", "h.12.w"));
        assert!(name_matches("*", "") && name_matches("**a**", "xay"));
    }
}
