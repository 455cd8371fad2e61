//! Plain-text output helpers shared by subcommands.

/// 10000 → "10,000".
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A 3-vector with a sensible number of digits.
pub fn vec3(v: [f32; 3]) -> String {
    format!(
        "({}, {}, {})",
        num(v[0] as f64),
        num(v[1] as f64),
        num(v[2] as f64)
    )
}

/// A number with up to 4 significant decimals, without trailing zeros.
pub fn num(v: f64) -> String {
    let s = if v.abs() >= 1000.0 {
        format!("{v:.1}")
    } else if v.abs() >= 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Prints `OUTPUT_FILE: <path>` on stdout, the line farm wrappers collect outputs by. With
/// `--json` commands print only their JSON document (which lists the outputs) instead.
pub fn output_file(path: &std::path::Path) {
    println!("OUTPUT_FILE: {}", path.display());
}

/// What a command wrote: `OUTPUT_FILE:` lines, or with `--json` one JSON object on standard
/// output, `{"outputs": [...]}` plus the fields of `more` (an object).
pub fn outputs(json: bool, files: &[std::path::PathBuf], more: serde_json::Value) {
    if json {
        let mut doc = serde_json::json!({
            "outputs": files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
        });
        if let (Some(d), serde_json::Value::Object(m)) = (doc.as_object_mut(), more) {
            d.extend(m);
        }
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
    } else {
        for f in files {
            output_file(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(160000), "160,000");
        assert_eq!(num(16.0), "16");
        assert_eq!(num(0.35), "0.35");
        assert_eq!(num(-32.51234), "-32.512");
    }
}
