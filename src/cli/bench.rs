//! `tress bench NAME`: performance figures (see `crate::bench`).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::bench;
use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum BenchName {
    /// Read speed of every groom and mesh reader on the shared real files.
    Formats,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    pub name: BenchName,
    /// The shared data folder (default: $TRESS_DATA).
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Timed runs per case (the best is reported).
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: &BenchArgs) -> Result<()> {
    match a.name {
        BenchName::Formats => {
            let data = a
                .data
                .clone()
                .or_else(|| std::env::var_os("TRESS_DATA").map(PathBuf::from))
                .ok_or_else(|| {
                    Error::Invalid("give the shared data folder with --data or TRESS_DATA".into())
                })?;
            let rows = bench::formats::run(&data, a.runs)?;
            if a.json {
                println!("{}", serde_json::to_string_pretty(&rows).expect("json"));
                return Ok(());
            }
            println!(
                "{:<40} {:<13} {:>10} {:>9} {:>9} {:>8}",
                "file", "reader", "bytes", "best ms", "MB/s", "÷memcpy"
            );
            for r in rows {
                println!(
                    "{:<40} {:<13} {:>10} {:>9.2} {:>9.0} {:>8.3}",
                    r.file, r.reader, r.bytes, r.best_ms, r.mb_per_s, r.vs_memcpy
                );
            }
            Ok(())
        }
    }
}
