//! The `sessiontree` binary.
fn main() {}
