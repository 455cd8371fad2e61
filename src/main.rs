//! The `tress` binary: parse arguments, run, turn errors into a message and an exit code.

use clap::Parser;

fn main() {
    let cli = tress::cli::Cli::parse();
    if let Err(e) = tress::cli::run(cli) {
        eprintln!("error: {e}");
        std::process::exit(e.exit_code());
    }
}
