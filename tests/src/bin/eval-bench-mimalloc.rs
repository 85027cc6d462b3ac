//! `eval-bench` (the Rust side of `benches/eval/run.py`) with mimalloc as the global
//! allocator instead of the system's: how much of a sample's cost is the allocator's, an
//! application's choice rather than the library's. Built with `--features mimalloc`.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "eval-bench.rs"]
mod eval_bench;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    eval_bench::main()
}
