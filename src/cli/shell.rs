//! `tress completions SHELL` and `tress man -o DIR`: shell completion scripts and roff man pages
//! generated from the command line's own definition (`clap_complete`, `clap_mangen`), so they
//! never drift from the options tress accepts.

use std::path::{Path, PathBuf};

use clap::CommandFactory;

use crate::error::{Error, Result};

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete in. Bash: `tress completions bash > ~/.local/share/bash-completion/completions/tress`;
    /// zsh: into a folder of `$fpath` as `_tress`; fish: `~/.config/fish/completions/tress.fish`.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// Folder to write the pages into (created): `tress.1` and one `tress-COMMAND.1` per
    /// subcommand, e.g. `-o ~/.local/share/man/man1`.
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// Print the list of pages written as JSON instead of OUTPUT_FILE lines.
    #[arg(long)]
    pub json: bool,
}

/// Prints the completion script for `shell` on standard output.
pub fn completions(a: &CompletionsArgs) -> Result<()> {
    let mut out = std::io::stdout().lock();
    completion_script(a.shell, &mut out)
}

/// Writes the completion script for `shell` to `out`.
pub fn completion_script(shell: clap_complete::Shell, out: &mut dyn std::io::Write) -> Result<()> {
    let mut cmd = super::Cli::command();
    clap_complete::generate(shell, &mut cmd, "tress", out);
    Ok(())
}

/// Writes every page; prints what it wrote.
pub fn man(a: &ManArgs) -> Result<()> {
    let files = man_pages(&a.output)?;
    super::report::outputs(a.json, &files, serde_json::json!({"pages": files.len()}));
    Ok(())
}

/// Writes `tress.1` and a page per subcommand (`tress-groom-new.1`, …) into `dir`, each written
/// whole or not at all. Returns their paths.
pub fn man_pages(dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|e| Error::Write {
        path: dir.to_path_buf(),
        source: e,
    })?;
    let mut cmd = super::Cli::command();
    cmd.build();
    let mut files = Vec::new();
    page(&cmd, "tress", dir, &mut files)?;
    Ok(files)
}

fn page(cmd: &clap::Command, name: &str, dir: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    // Subcommand pages carry their full name ("tress-groom-new"), as git's do.
    let cmd = cmd
        .clone()
        .name(name.to_string())
        .bin_name(name.replace('-', " "));
    let mut bytes = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .render(&mut bytes)
        .map_err(|e| Error::Runtime(format!("man page {name}: {e}")))?;
    let path = dir.join(format!("{name}.1"));
    tress_formats::atomic::write(&path, &bytes).map_err(|e| crate::error::output_error(&path, e))?;
    files.push(path);
    for sub in cmd.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        page(sub, &format!("{name}-{}", sub.get_name()), dir, files)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bash itself loads the script and, asked to complete `tress sim` and `tress simulate
    /// --out`, answers with the real command and options.
    #[test]
    fn bash_completes_commands_and_options_from_the_script() {
        if std::process::Command::new("bash")
            .arg("--version")
            .output()
            .is_err()
        {
            eprintln!("no bash here: the script's syntax is not checked");
            return;
        }
        let mut script = Vec::new();
        completion_script(clap_complete::Shell::Bash, &mut script).unwrap();
        let dir = std::env::temp_dir().join(format!("tress-compl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("tress.bash");
        std::fs::write(&file, &script).unwrap();
        let ask = |words: &str| -> String {
            // What bash's programmable completion calls: the function with COMP_WORDS set.
            let probe = format!(
                "source '{}'; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}}-1)); \
                 COMP_LINE=\"${{COMP_WORDS[*]}}\"; COMP_POINT=${{#COMP_LINE}}; _tress tress \"${{COMP_WORDS[-1]}}\" \
                 \"${{COMP_WORDS[-2]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
                file.display()
            );
            let out = std::process::Command::new("bash")
                .args(["--norc", "-c", &probe])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "bash failed on the script: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap()
        };
        let cmds = ask("tress sim");
        assert!(cmds.lines().any(|l| l == "simulate"), "tress sim → {cmds:?}");
        let opts = ask("tress simulate --out");
        assert!(
            opts.lines().any(|l| l == "--out-up"),
            "tress simulate --out → {opts:?}"
        );
        let units = ask("tress simulate --units ''");
        for u in ["cm", "m", "mm"] {
            assert!(units.split_whitespace().any(|w| w == u), "--units → {units:?}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// groff formats every page without a warning, and the page of `tress simulate` lists its
    /// options as `man` shows them.
    #[test]
    fn man_pages_format_cleanly_and_list_the_options() {
        let dir = std::env::temp_dir().join(format!("tress-man-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let files = man_pages(&dir).unwrap();
        let names: Vec<String> = files
            .iter()
            .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        for want in [
            "tress.1",
            "tress-simulate.1",
            "tress-groom-new.1",
            "tress-farm-export.1",
        ] {
            assert!(names.iter().any(|n| n == want), "{want} missing from {names:?}");
        }
        if std::process::Command::new("groff")
            .arg("--version")
            .output()
            .is_err()
        {
            eprintln!("no groff here: pages are not formatted");
            return;
        }
        for f in &files {
            let out = std::process::Command::new("groff")
                .args(["-k", "-man", "-Tutf8", "-ww"])
                .arg(f)
                .output()
                .unwrap();
            let warnings = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success() && warnings.trim().is_empty(),
                "{}: {warnings}",
                f.display()
            );
            if f.ends_with("tress-simulate.1") {
                let text = String::from_utf8_lossy(&out.stdout);
                // groff may embolden with backspaces: compare the letters.
                let plain: String = {
                    let mut s = String::new();
                    for c in text.chars() {
                        if c == '\u{8}' {
                            s.pop();
                        } else {
                            s.push(c);
                        }
                    }
                    s
                };
                let words = plain.split_whitespace().collect::<Vec<_>>().join(" ");
                for want in ["--units", "--out-up", "tress simulate"] {
                    assert!(words.contains(want), "{want} not in the page:\n{plain}");
                }
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
