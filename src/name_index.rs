//! [`NameIndex`] (feature `std`): constant-time lookups by name, for servers that look up many entries.

use std::collections::HashMap;

use crate::read::Container;
use crate::read::Entry;

/// A hash table of a container's entry names, built once in O(n) with one allocation, then O(1) per lookup.
///
/// [`Container::get`] needs no memory and no set-up — a binary search over the name index the format stores,
/// which is what a microcontroller wants. Its cost grows with log n and with cache misses in a large table;
/// a server looking up many names in a 100,000-entry checkpoint is better served by this index. It hashes
/// with the standard library's keyed SipHash, so a file whose names were crafted to collide cannot make
/// building or lookups quadratic.
///
/// ```
/// # let bytes = {
/// #     let mut b = tpack::write::Builder::new();
/// #     b.push(tpack::write::NewEntry::new("w", tpack::Dtype::U8, &[1], &[7]))?;
/// #     b.finish()?
/// # };
/// let container = tpack::Container::parse(&bytes)?;
/// let index = tpack::NameIndex::new(&container);
/// assert_eq!(index.get("w").map(|e| e.payload()), Some(&[7u8][..]));
/// assert!(index.get("nope").is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct NameIndex<'a> {
    container: Container<'a>,
    entries: HashMap<&'a [u8], u32>,
}

impl<'a> NameIndex<'a> {
    /// Indexes every entry name of `container`.
    #[must_use]
    pub fn new(container: &Container<'a>) -> Self {
        let mut entries = HashMap::with_capacity(container.len());
        for (entry, name) in (0u32..).zip(container.entries().map(|e| e.name().as_bytes())) {
            entries.insert(name, entry);
        }
        Self { container: *container, entries }
    }

    /// The entry called `name`; the same answer as [`Container::get`].
    #[must_use]
    pub fn get(&self, name: &str) -> Option<Entry<'a>> {
        let &entry = self.entries.get(name.as_bytes())?;
        self.container.entry(usize::try_from(entry).ok()?)
    }

    /// The indexed container.
    #[must_use]
    pub fn container(&self) -> &Container<'a> {
        &self.container
    }
}
