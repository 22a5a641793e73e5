//! Independent work over many items (documents of a large chart) on all cores, results in input order.

/// Below this many items per thread, a thread costs more than it saves.
const MIN_CHUNK: usize = 64;

/// `items.iter().map(f).collect()`, in contiguous chunks on scoped threads (one per core) when there are
/// enough items. A panic in `f` is re-raised on the calling thread.
pub fn map_ordered<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let chunk = items.len().div_ceil(threads).max(MIN_CHUNK);
    if items.len() <= chunk {
        return items.iter().map(f).collect();
    }
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> =
            items.chunks(chunk).map(|c| s.spawn(move || c.iter().map(f).collect::<Vec<R>>())).collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    })
}

/// Drops `value` on a thread of its own, off the caller's path: for large trees of objects whose freeing
/// would hold up what the user waits for.
pub fn drop_later<T: Send + 'static>(value: T) {
    // Should no thread start, the closure, and `value` with it, is dropped here instead.
    let _ = std::thread::Builder::new().name("drop".into()).spawn(move || drop(value));
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_input_order_across_chunks() {
        let items: Vec<usize> = (0..1000).collect();
        assert_eq!(super::map_ordered(&items, |i| i * 2), items.iter().map(|i| i * 2).collect::<Vec<_>>());
        assert_eq!(super::map_ordered(&items[..3], |i| i + 1), vec![1, 2, 3]);
        assert!(super::map_ordered(&[] as &[u8], |b| *b).is_empty());
    }
}
