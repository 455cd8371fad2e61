//! The `tress` binary: parse arguments, run, turn errors into a message and an exit code.

use clap::Parser;

fn main() {
    // Behave like other command-line tools when the reader of our output goes away
    // (`tress inspect … | head`): end quietly instead of failing on a broken pipe.
    #[cfg(unix)]
    // SAFETY: restoring the default signal disposition before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // A panic is a bug in tress: say so in one line (with a backtrace under RUST_BACKTRACE).
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("error: internal error ({msg}{at}); this is a bug in tress, please report it");
        if std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0") {
            eprintln!("{}", std::backtrace::Backtrace::force_capture());
        }
    }));
    // Binary USD layers are read first in a child process under a memory limit (a damaged
    // count must not abort tress): this is that child.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.len() == 3 && args[1] == tress::formats::usd::read::PROBE_ARG {
        std::process::exit(tress::formats::usd::read::probe_main(std::path::Path::new(
            &args[2],
        )));
    }
    if let Ok(exe) = std::env::current_exe() {
        tress::formats::usd::read::set_probe(exe);
    }
    // With --json, a failure is JSON on standard output too, so a script reading it sees why.
    let json = std::env::args_os().any(|a| a == "--json");
    let fail = |message: String, code: i32| -> ! {
        if json {
            println!("{}", serde_json::json!({"error": message, "exit_code": code}));
        }
        std::process::exit(code)
    };
    let cli = match tress::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(), // --help, --version
        Err(e) => {
            let _ = e.print();
            fail(
                e.to_string()
                    .lines()
                    .next()
                    .unwrap_or("")
                    .trim_start_matches("error: ")
                    .into(),
                2,
            )
        }
    };
    // Logs on standard error: warnings by default, -v info, -vv debug (RUST_LOG overrides).
    let level = match cli.verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("tress={level}")));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .init();
    if let Err(e) = tress::cli::run(cli) {
        eprintln!("error: {e}");
        fail(e.to_string(), e.exit_code());
    }
}
