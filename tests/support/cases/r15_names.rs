//! Spec §12, names and index group (§5): R15–R21.

use tpack::zerocopy::little_endian::U32;
use tpack::{Dtype, Rule::*};

use super::super::raw::*;
use super::model::*;
use super::Case;

pub fn cases() -> Vec<Case> {
    let n = base().entries.len();
    vec![
        // R15
        invalid(
            NameBounds,
            "last-name-past-pool",
            "the last name runs one byte past the pool",
            patched(move |b| {
                let d = descriptor_mut(b, n - 1);
                d.name_len = U32::new(d.name_len.get() + 1);
            }),
        ),
        // R16
        invalid(
            NamePoolLayout,
            "names-swapped",
            "the first two names are stored in swapped order",
            patched(|b| {
                let (names, _) = section(b, 2);
                let (l0, l1) =
                    (descriptor(b, 0).name_len.get() as usize, descriptor(b, 1).name_len.get() as usize);
                b[names..names + l0 + l1].rotate_left(l0);
                descriptor_mut(b, 0).name_offset = U32::new(l1 as u32);
                descriptor_mut(b, 1).name_offset = U32::new(0);
            }),
        ),
        // R17
        invalid(NameLength, "empty", "an empty name", model(|r| r.entries[5].name.clear())),
        invalid(
            NameLength,
            "1025-bytes",
            "a name of 1025 bytes",
            model(|r| r.entries[5].name = vec![b'x'; 1025]),
        ),
        // R18
        invalid(
            NameUtf8,
            "ff-byte",
            "a name with a 0xFF byte",
            model(|r| r.entries[5].name = b"bad\xffname".to_vec()),
        ),
        invalid(
            NameUtf8,
            "surrogate",
            "a name holding an encoded surrogate, ED A0 80",
            model(|r| r.entries[5].name = b"s\xed\xa0\x80".to_vec()),
        ),
        invalid(
            NameUtf8,
            "overlong",
            "a name holding an overlong encoding of '/', C0 AF",
            model(|r| r.entries[5].name = b"o\xc0\xaf".to_vec()),
        ),
        // R19
        invalid(
            IndexRange,
            "value-n",
            "an index value equal to the entry count",
            index_patched(|index| index[..4].copy_from_slice(&(n as u32).to_le_bytes())),
        ),
        invalid(
            IndexRange,
            "repeated",
            "an index listing one entry twice",
            index_patched(|index| index.copy_within(0..4, 4)),
        ),
        // R20
        invalid(
            IndexOrder,
            "swapped",
            "the first two index slots swapped",
            index_patched(|index| index[..8].rotate_left(4)),
        ),
        invalid(IndexOrder, "not-a-permutation", "index [0, 1, 0] over names a, b, c", {
            let mut b = of_entries(
                ["a", "b", "c"].iter().map(|n| RawEntry::new(n, Dtype::U8, &[1], vec![1])).collect(),
            );
            let (index, _) = section(&b, 1);
            b[index + 8..index + 12].copy_from_slice(&0u32.to_le_bytes());
            fix(&mut b);
            b
        }),
        // R21
        invalid(
            DuplicateName,
            "two-entries",
            "two entries named embed.weight",
            model(|r| r.entries[5].name = b"embed.weight".to_vec()),
        ),
    ]
}
