//! Library use: generate a procedural groom, resample it, and write it as PLY and .hair.
//!
//! `cargo run --release --example generate_groom -- /tmp/out`

use std::path::PathBuf;

use tress::groom::{GroomParams, GroomStats, Style, generate, resample, write_groom};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| ".".into()));
    let groom = generate(&GroomParams {
        strands: 2000,
        ..GroomParams::for_style(Style::Curly)
    })?;
    let dense = resample(&groom, 50);
    let stats = GroomStats::of(&dense);
    println!("{} strands, {} points", stats.strand_count, stats.point_count);
    write_groom(&dir.join("curly.ply"), &dense)?;
    write_groom(&dir.join("curly.hair"), &dense)?;
    Ok(())
}
