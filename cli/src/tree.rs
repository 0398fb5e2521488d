//! The tree of entry names that `tpack inspect` draws, built so that every entry is exactly one row.
//!
//! A name is cut into pieces after each `.` and `/` that has something after it, and each piece keeps the
//! separator it ends with: `model.layers.0.weight` is `model.` `layers.` `0.` `weight`. A node is the
//! prefix of the names below it, and its label is its piece, so the labels on the path to a row spell the
//! entry's whole name. Hence:
//! - distinct names are distinct paths, and each name ends at exactly one node: `a.b` (`a.` `b`) and `a/b`
//!   (`a/` `b`) are two rows, not one, and `model.weight`, `model/weight`, `model.bias` are three;
//! - no label is empty: a separator at the end of a name stays in its last piece, so `.`, `..` (`.` `.`),
//!   `/` and `//` are four rows. Only the empty name has an empty piece, shown as [`EMPTY_NAME`];
//! - a node can be an entry and have children (`a.` and `a.b`): it is one row holding that entry;
//! - a node that is not an entry and has one child is drawn on one row with that child (`0.attn.`):
//!   labels are concatenated, so the path still spells the name.
//!
//! Rejected: splitting on separators and dropping them (the old tree): `a.b` and `a/b` became one row, and
//! `.`, `..`, `/`, `//` collapsed into empty labels.
//!
//! Names are cut into at most [`MAX_PIECES`] pieces (the rest stays in the last one), so walks stay shallow
//! whatever a hostile file holds. Children are in natural order ([`crate::natural`]).
//!
//! Repeated layers: siblings whose labels are consecutive numbers with the same separator (`0.` `1.` … `31.`)
//! and whose subtrees have the same structure (the same labels, and entries of the same kind, which the
//! caller defines — dtype and shape) can be drawn as one group, `{0..31}.`, showing the first one's subtree.

use std::collections::HashMap;

use crate::natural;

/// Most pieces a name is cut into.
pub const MAX_PIECES: usize = 64;

/// The label of the empty name's row.
pub const EMPTY_NAME: &str = "(empty name)";

/// Fewest siblings drawn as one group of repeated layers.
pub const MIN_GROUP: usize = 2;

/// The pieces of `name`: cut after each separator that is followed by something, at most [`MAX_PIECES`].
#[must_use]
pub fn pieces(name: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in name.char_indices() {
        if out.len() + 1 == MAX_PIECES {
            break;
        }
        if (c == '.' || c == '/') && i + 1 < name.len() {
            out.push(&name[start..=i]);
            start = i + 1;
        }
    }
    out.push(&name[start..]);
    out
}

#[derive(Debug)]
struct Node<'a> {
    label: &'a str,
    entry: Option<usize>,
    children: Vec<usize>,
}

/// The tree of a set of names; node 0 is the root.
#[derive(Debug)]
pub struct Tree<'a> {
    nodes: Vec<Node<'a>>,
    /// Structure of each node's subtree as an interned id: equal ids, equal structure.
    shape_ids: Vec<u32>,
    /// Entries at or below each node.
    counts: Vec<usize>,
}

/// A subtree's structure: its entry's kind, and each child's label and structure id.
type Structure<'a> = (Option<u32>, Vec<(&'a str, u32)>);

/// One row of a drawn tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The tree drawing before the label (`│   ├── `).
    pub prefix: String,
    /// The label (not escaped): one or more pieces, or a group such as `{0..31}.`.
    pub label: String,
    /// The entry this row is, if it is one (for a group: the first member's).
    pub entry: Option<usize>,
    /// For a group of repeated layers, how many it stands for.
    pub repeats: Option<usize>,
    /// Entries below this row that are not drawn because of the depth limit.
    pub hidden: Option<usize>,
    /// The entries this row and its hidden subtree hold (for totals of hidden rows).
    pub hidden_entries: Vec<usize>,
}

/// How to draw a [`Tree`].
#[derive(Debug, Clone, Copy)]
pub struct Draw {
    /// Draw repeated layers as one group.
    pub collapse: bool,
    /// Rows below this depth (1 = top level only) are summarised in their parent; `None` draws all.
    pub depth: Option<usize>,
}

impl<'a> Tree<'a> {
    /// The tree of `names` (entry index, name); `kind` gives each entry's kind for telling repeated layers.
    /// Names must be distinct.
    #[must_use]
    pub fn new(names: impl IntoIterator<Item = (usize, &'a str)>, kind: impl Fn(usize) -> u32) -> Self {
        let mut nodes = vec![Node { label: "", entry: None, children: Vec::new() }];
        let mut lookup: HashMap<(usize, &'a str), usize> = HashMap::new();
        for (entry, name) in names {
            let mut at = 0;
            for piece in pieces(name) {
                at = *lookup.entry((at, piece)).or_insert_with(|| {
                    nodes.push(Node { label: piece, entry: None, children: Vec::new() });
                    let id = nodes.len() - 1;
                    nodes[at].children.push(id);
                    id
                });
            }
            nodes[at].entry = Some(entry);
        }
        for i in 0..nodes.len() {
            let mut children = std::mem::take(&mut nodes[i].children);
            children.sort_by(|&a, &b| natural::cmp(nodes[a].label, nodes[b].label));
            nodes[i].children = children;
        }
        // A child always comes after its parent in `nodes`, so walking backwards visits children first.
        let mut shape_ids = vec![0u32; nodes.len()];
        let mut counts = vec![0usize; nodes.len()];
        let mut interned: HashMap<Structure<'a>, u32> = HashMap::new();
        for i in (0..nodes.len()).rev() {
            let node = &nodes[i];
            let key = (
                node.entry.map(&kind),
                node.children.iter().map(|&c| (nodes[c].label, shape_ids[c])).collect::<Vec<_>>(),
            );
            let next = u32::try_from(interned.len()).unwrap_or(u32::MAX);
            shape_ids[i] = *interned.entry(key).or_insert(next);
            counts[i] =
                usize::from(node.entry.is_some()) + node.children.iter().map(|&c| counts[c]).sum::<usize>();
        }
        Self { nodes, shape_ids, counts }
    }

    /// The rows of the tree drawn with `draw`, in order, each prefixed by `indent`.
    #[must_use]
    pub fn rows(&self, draw: Draw, indent: &str) -> Vec<Row> {
        let mut rows = Vec::new();
        // (siblings still to draw at this level, the prefix of their level, depth)
        let mut stack: Vec<(std::vec::IntoIter<Group>, String, usize)> =
            vec![(self.groups(0, draw.collapse).into_iter(), indent.to_owned(), 1)];
        while let Some((siblings, prefix, depth)) = stack.last_mut() {
            let Some(group) = siblings.next() else {
                stack.pop();
                continue;
            };
            let last = siblings.len() == 0;
            let (prefix, depth) = (prefix.clone(), *depth);
            let branch = if last { "└── " } else { "├── " };
            let mut label = match &group.repeats {
                Some((first, last_number, suffix)) => format!("{{{first}..{last_number}}}{suffix}"),
                None => self.nodes[group.node].label.to_owned(),
            };
            let mut node = group.node;
            while self.nodes[node].entry.is_none() && self.nodes[node].children.len() == 1 {
                node = self.nodes[node].children[0];
                label.push_str(self.nodes[node].label);
            }
            if self.nodes[node].label.is_empty() && self.nodes[node].children.is_empty() {
                label = EMPTY_NAME.to_owned();
            }
            let has_children = !self.nodes[node].children.is_empty();
            let cut = draw.depth.is_some_and(|d| depth >= d) && has_children;
            let repeats = group.repeats.map(|_| group.members);
            rows.push(Row {
                prefix: format!("{prefix}{branch}"),
                label,
                entry: self.nodes[node].entry,
                repeats,
                hidden: cut.then(|| self.counts[node] - usize::from(self.nodes[node].entry.is_some())),
                hidden_entries: if cut { self.entries_below(node) } else { Vec::new() },
            });
            if has_children && !cut {
                let deeper = format!("{prefix}{}", if last { "    " } else { "│   " });
                stack.push((self.groups(node, draw.collapse).into_iter(), deeper, depth + 1));
            }
        }
        rows
    }

    /// Every entry at or below `node`.
    fn entries_below(&self, node: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut todo = vec![node];
        while let Some(n) = todo.pop() {
            out.extend(self.nodes[n].entry);
            todo.extend(self.nodes[n].children.iter().copied());
        }
        out
    }

    /// The children of `node` as rows to draw: one per child, or one per run of repeated layers.
    fn groups(&self, node: usize, collapse: bool) -> Vec<Group> {
        let children = &self.nodes[node].children;
        let mut out = Vec::with_capacity(children.len());
        let mut i = 0;
        while i < children.len() {
            let first = children[i];
            let mut end = i + 1;
            if let (true, Some((n, suffix))) = (collapse, number_label(self.nodes[first].label)) {
                while let Some(&next) = children.get(end) {
                    let same = number_label(self.nodes[next].label)
                        .is_some_and(|(m, s)| s == suffix && Some(m) == n.checked_add((end - i) as u64));
                    if !same || self.shape_ids[next] != self.shape_ids[first] {
                        break;
                    }
                    end += 1;
                }
                let members = end - i;
                if members >= MIN_GROUP {
                    let last = n + (members as u64 - 1);
                    out.push(Group { node: first, members, repeats: Some((n, last, suffix.to_owned())) });
                    i = end;
                    continue;
                }
            }
            out.push(Group { node: first, members: 1, repeats: None });
            i += 1;
        }
        out
    }
}

/// Siblings drawn as one row.
struct Group {
    /// The first (or only) member.
    node: usize,
    /// How many siblings the row stands for.
    members: usize,
    /// For repeated layers: the first and last number and the separator after them.
    repeats: Option<(u64, u64, String)>,
}

/// A label that is a number written without leading zeros, then a separator or nothing: `12.` → (12, ".").
fn number_label(label: &str) -> Option<(u64, &str)> {
    let digits = label.bytes().take_while(u8::is_ascii_digit).count();
    let (number, rest) = label.split_at(digits);
    if digits == 0 || (digits > 1 && number.starts_with('0')) || !matches!(rest, "" | "." | "/") {
        return None;
    }
    Some((number.parse().ok()?, rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The full names the rows spell (labels along the path), found from the drawing's indentation alone.
    fn spelled(rows: &[Row]) -> Vec<String> {
        let mut path: Vec<String> = Vec::new();
        let mut out = Vec::new();
        for r in rows {
            let depth = r.prefix.chars().count() / 4;
            path.truncate(depth - 1);
            let label = if r.label == EMPTY_NAME { "" } else { &r.label };
            path.push(label.to_owned());
            if r.entry.is_some() {
                out.push(path.concat());
            }
        }
        out
    }

    fn draw(names: &[&str]) -> Vec<Row> {
        Tree::new(names.iter().copied().enumerate(), |_| 0).rows(Draw { collapse: false, depth: None }, "")
    }

    #[test]
    fn separators_stay_in_their_piece() {
        assert_eq!(pieces("model.layers.0/w"), ["model.", "layers.", "0/", "w"]);
        assert_eq!(pieces("a."), ["a."]);
        assert_eq!(pieces(".."), [".", "."]);
        assert_eq!(pieces("//"), ["/", "/"]);
        assert_eq!(pieces(""), [""]);
        assert_eq!(pieces(&".".repeat(1000)).len(), MAX_PIECES);
    }

    #[test]
    fn names_the_old_tree_merged_are_rows_of_their_own() {
        let names = ["a.b", "a/b", "model.weight", "model/weight", "model.bias", ".", "..", "/", "//", ""];
        let rows = draw(&names);
        let mut got = spelled(&rows);
        got.sort();
        let mut want: Vec<String> = names.iter().map(|s| (*s).to_owned()).collect();
        want.sort();
        assert_eq!(got, want);
        assert_eq!(rows.iter().filter(|r| r.entry.is_some()).count(), names.len());
    }

    #[test]
    fn repeated_layers_become_one_group_and_a_different_one_breaks_it() {
        let mut names = Vec::new();
        for i in 0..12 {
            names.push(format!("h.{i}.w"));
            names.push(format!("h.{i}.b"));
        }
        let kind = |e: usize| u32::from(e == 2 * 5); // layer 5's `w` is of another kind
        let tree = Tree::new(names.iter().map(String::as_str).enumerate(), kind);
        let rows = tree.rows(Draw { collapse: true, depth: None }, "");
        let labels: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["h.", "{0..4}.", "b", "w", "5.", "b", "w", "{6..11}.", "b", "w"]);
        assert_eq!(rows[1].repeats, Some(5));
        let all = tree.rows(Draw { collapse: false, depth: None }, "");
        assert_eq!(all.iter().filter(|r| r.entry.is_some()).count(), 24);
    }

    #[test]
    fn the_depth_limit_counts_what_it_hides() {
        let rows = Tree::new(["a.b.c", "a.b.d", "a.e"].into_iter().enumerate(), |_| 0)
            .rows(Draw { collapse: false, depth: Some(2) }, "");
        let labels: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["a.", "b.", "e"]);
        assert_eq!(rows[1].hidden, Some(2));
        assert_eq!(rows[1].hidden_entries.len(), 2);
    }

    #[test]
    fn layers_are_in_natural_order() {
        let labels: Vec<String> = draw(&["l.10", "l.2", "l.1"]).into_iter().map(|r| r.label).collect();
        assert_eq!(labels, ["l.", "1", "2", "10"]);
    }

    proptest! {
        /// Every entry is exactly one row, and the row's path spells its name.
        #[test]
        fn every_entry_is_one_row(names in proptest::collection::btree_set("[ab./]{0,6}", 0..40)) {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let rows = draw(&names);
            let mut got = spelled(&rows);
            got.sort();
            let mut want: Vec<String> = names.iter().map(|s| (*s).to_owned()).collect();
            want.sort();
            prop_assert_eq!(got, want);
        }
    }
}
