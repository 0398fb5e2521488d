//! Shard planning: which tensors go in which shard, given their sizes and a size limit. Shared by every
//! writer of sharded output (safetensors here; a GGUF split writer can use it too).

/// Splits tensors of `sizes` bytes (in model order) into shards of at most `limit` bytes, exactly as
/// `huggingface_hub`'s `split_state_dict_into_shards_factory` (and so `transformers`' `save_pretrained`)
/// does, so that a model sharded here is sharded as Hugging Face would shard it:
///
/// - tensors are taken in order, and a shard is closed when the next tensor would take it over `limit`;
/// - a tensor larger than `limit` gets a shard of its own, placed when it is met, *before* the shard being
///   filled (which goes on filling with the tensors after it);
/// - no shard is empty, and a model with no tensors has no shards.
///
/// Returns the index of each tensor of each shard, in order. Every tensor is in exactly one shard, and a
/// shard with more than one tensor holds at most `limit` bytes.
#[must_use]
pub(crate) fn hf_shards(sizes: &[u64], limit: u64) -> Vec<Vec<usize>> {
    let mut shards = Vec::new();
    let mut current = Vec::new();
    let mut current_size = 0u64;
    for (i, &size) in sizes.iter().enumerate() {
        if size > limit {
            shards.push(vec![i]);
            continue;
        }
        // Saturating: near u64::MAX the sum could overflow, and a saturated sum compares the same.
        if current_size.saturating_add(size) > limit && !current.is_empty() {
            shards.push(std::mem::take(&mut current));
            current_size = 0;
        }
        current.push(i);
        current_size = current_size.saturating_add(size);
    }
    if !current.is_empty() {
        shards.push(current);
    }
    shards
}

#[cfg(test)]
mod tests {
    use super::hf_shards;
    use proptest::prelude::*;

    /// The example of `split_state_dict_into_shards_factory`'s docstring: limit 10, sizes 6 6 2 6 2 2 give
    /// [6], [6+2], [6+2+2].
    #[test]
    fn the_hugging_face_docstring_example() {
        assert_eq!(hf_shards(&[6, 6, 2, 6, 2, 2], 10), vec![vec![0], vec![1, 2], vec![3, 4, 5]]);
    }

    /// A tensor over the limit gets its own shard, before the shard being filled, as the factory appends it.
    #[test]
    fn an_oversized_tensor_gets_its_own_shard_before_the_open_one() {
        assert_eq!(hf_shards(&[2, 2, 20, 2], 10), vec![vec![2], vec![0, 1, 3]]);
        assert_eq!(hf_shards(&[20], 10), vec![vec![0]]);
        assert_eq!(hf_shards(&[], 10), Vec::<Vec<usize>>::new());
        assert_eq!(hf_shards(&[0, 0, 10, 0], 10), vec![vec![0, 1, 2, 3]]);
    }

    /// The plans `huggingface_hub` itself made for these sizes (`fixtures/shard_plans.json`, written by
    /// `fixtures/make_shards.py` with the factory): the same shards, in the same order.
    #[test]
    fn plans_match_huggingface_hub() {
        let text = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/shard_plans.json"));
        let cases: serde_json::Value = serde_json::from_str(text).unwrap();
        let cases = cases.as_array().unwrap();
        assert!(cases.len() >= 5);
        for case in cases {
            let sizes: Vec<u64> =
                case["sizes"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
            let limit = case["limit"].as_u64().unwrap();
            let want: Vec<Vec<usize>> = serde_json::from_value(case["shards"].clone()).unwrap();
            assert_eq!(hf_shards(&sizes, limit), want, "{sizes:?} limit {limit}");
        }
    }

    proptest! {
        #[test]
        fn every_tensor_once_and_shards_within_the_limit(sizes in prop::collection::vec(0u64..100, 0..40), limit in 1u64..200) {
            let plan = hf_shards(&sizes, limit);
            let mut seen: Vec<usize> = plan.iter().flatten().copied().collect();
            seen.sort_unstable();
            prop_assert_eq!(seen, (0..sizes.len()).collect::<Vec<_>>());
            for shard in &plan {
                prop_assert!(!shard.is_empty());
                let total: u64 = shard.iter().map(|&i| sizes[i]).sum();
                prop_assert!(shard.len() == 1 || total <= limit, "{:?}", shard);
            }
        }
    }
}
