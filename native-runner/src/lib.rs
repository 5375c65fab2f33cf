//! The `skblab` runner: terminal walkthroughs, scenario runs and comparisons on the core.
//!
//! A thin shell: it reads files, picks colours and prints; the core computes everything.

pub mod cli;
pub mod engine;
pub mod kernel;
pub mod net;
pub mod output;
pub mod quiz;
pub mod render;
pub mod serve;
pub mod tap;
pub mod trace;
