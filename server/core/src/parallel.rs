//! Parallelism decided in one place: every thread the engine (and the server's own splits of
//! work, such as workspace symbols) starts is started here. An engine
//! call that splits its work (reading a large file in segments, laying out or searching many
//! rows, walking a tree while its marks are gathered) asks how many threads it may use; the
//! answer is sized from the machine (its available cores), or set once by the caller
//! ([`set_threads`]), and with one thread the same work runs here, in order. A sync that may
//! finish after the call returns runs on a [`background`] thread.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Threads a call may use at once; 0 until decided.
static THREADS: AtomicUsize = AtomicUsize::new(0);

/// How many threads an engine call may use at once (at least 1): what [`set_threads`] set, else
/// the machine's available cores.
pub fn threads() -> usize {
    match THREADS.load(Ordering::Relaxed) {
        0 => {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            THREADS.store(cores, Ordering::Relaxed);
            cores
        }
        n => n,
    }
}

/// Sets how many threads an engine call may use at once (at least 1), for the whole process.
pub fn set_threads(n: usize) {
    THREADS.store(n.max(1), Ordering::Relaxed);
}

/// `a` here and `b` on a second thread, at once (both here, `a` first, with one thread). A
/// panic on the second thread would be a bug; `b` is then run here rather than its result lost.
pub fn join<A, B>(a: impl FnOnce() -> A, b: impl Fn() -> B + Sync) -> (A, B)
where
    B: Send,
{
    if threads() < 2 {
        return (a(), b());
    }
    std::thread::scope(|scope| {
        let second = scope.spawn(&b);
        let first = a();
        let second = second.join().unwrap_or_else(|_| b());
        (first, second)
    })
}

/// `work` on two halves at once: `b` on a second thread, `a` here ([`join`]).
pub(crate) fn on_two_threads<I, T>(a: I, b: I, work: impl Fn(I) -> T + Sync) -> [T; 2]
where
    I: Copy + Send + Sync,
    T: Send,
{
    let (first, second) = join(|| work(a), || work(b));
    [first, second]
}

/// Runs `work` on every thread a call may use, this one included, until it returns on each
/// (workers that take shares of a queue). `false` when another thread panicked.
pub fn on_every_thread(work: impl Fn() + Sync) -> bool {
    let others = threads() - 1;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..others).map(|_| scope.spawn(&work)).collect();
        work();
        handles
            .into_iter()
            .map(std::thread::ScopedJoinHandle::join)
            .all(|joined| joined.is_ok())
    })
}

/// Starts `work` on a thread of its own that may outlive the call (a sync answered later).
pub(crate) fn background<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    std::thread::spawn(work)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The helpers give the same answers with one thread as with two.
    #[test]
    fn one_thread_or_two_give_the_same_answers() {
        let before = threads();
        for n in [1, 2] {
            set_threads(n);
            assert_eq!(join(|| 1, || 2), (1, 2));
            assert_eq!(on_two_threads(3, 4, |x| x * 10), [30, 40]);
            let count = AtomicUsize::new(0);
            assert!(on_every_thread(|| {
                count.fetch_add(1, Ordering::Relaxed);
            }));
            assert_eq!(count.load(Ordering::Relaxed), n);
        }
        set_threads(before);
    }
}
