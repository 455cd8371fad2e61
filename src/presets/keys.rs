//! Friendly errors for job and preset files: unknown keys named with their full path and the closest
//! known key suggested; `extends` chains merged; `${VAR}` expanded in paths.

use toml::{Table, Value};

use crate::error::{Error, Result};

/// Merges `over` into `base`: tables recursively, anything else replaced.
pub fn merge(base: &mut Table, over: Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(Value::Table(b)), Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// The known key closest to `key`, if any is close enough to be a plausible typo.
pub fn suggest<'a>(key: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (strsim::jaro_winkler(key, k), *k))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}

/// Deserializes `value` (the table at `path` of `origin`), turning serde's "unknown field"
/// messages into "origin: unknown key `path.key` (did you mean `…`?)".
pub fn section<T: serde::de::DeserializeOwned>(value: Value, path: &str, origin: &str) -> Result<T> {
    T::deserialize(value.clone()).map_err(|e| {
        let msg = e.message().trim().to_string();
        // serde: "unknown field `x`, expected one of `a`, `b`" (or "expected `a`").
        if let Some(rest) = msg.strip_prefix("unknown field `")
            && let Some((key, tail)) = rest.split_once('`')
        {
            let known: Vec<&str> = tail.split('`').skip(1).step_by(2).collect();
            let full = if path.is_empty() {
                key.to_string()
            } else {
                format!("{path}.{key}")
            };
            let hint = suggest(key, &known)
                .map(|k| format!(" (did you mean `{k}`?)"))
                .unwrap_or_default();
            return Error::Invalid(format!(
                "{origin}: unknown key `{full}`{hint}; known keys here: {}",
                known.join(", ")
            ));
        }
        // A wrong value: find the key (the one whose removal makes the section read) and its
        // line in the file, and say what was expected in plain words.
        let culprit = value.as_table().and_then(|t| {
            t.keys()
                .find(|k| {
                    // Without the culprit the section reads, or misses just that key.
                    let mut without = t.clone();
                    without.remove(*k);
                    match T::deserialize(Value::Table(without)) {
                        Ok(_) => true,
                        Err(e) => e.message().trim() == format!("missing field `{k}`"),
                    }
                })
                .cloned()
        });
        let msg = plain_words(&msg);
        match culprit {
            Some(key) => {
                let full = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                let line = line_of(origin, path, &key)
                    .map(|l| format!(":{l}"))
                    .unwrap_or_default();
                Error::Invalid(format!("{origin}{line}: `{full}`: {msg}"))
            }
            None => {
                let at = if path.is_empty() {
                    String::new()
                } else {
                    format!(" in [{path}]")
                };
                Error::Invalid(format!("{origin}{at}: {msg}"))
            }
        }
    })
}

/// serde's "invalid type: string \"2000\", expected usize" in plain words.
fn plain_words(msg: &str) -> String {
    let Some((found, expected)) = msg.split_once(", expected ") else {
        return msg.to_string();
    };
    let found = found.strip_prefix("invalid type: ").unwrap_or(found);
    let expected = match expected.trim() {
        "usize" | "u8" | "u16" | "u32" | "u64" => "a whole number (0 or more, no quotes)",
        "i32" | "i64" | "isize" => "a whole number (no quotes)",
        "f32" | "f64" => "a number (no quotes)",
        "a boolean" => "true or false",
        e => e,
    };
    format!("expected {expected}, found {found}")
}

/// The line (1-based) of `key =` inside `[section]` of the file `origin`, when `origin` is a
/// readable file that sets it (the key may also come from a preset it extends).
fn line_of(origin: &str, section: &str, key: &str) -> Option<usize> {
    let text = std::fs::read_to_string(origin).ok()?;
    let mut current = String::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if let Some(h) = l.strip_prefix('[') {
            current = h.trim_start_matches('[').trim_end_matches(']').trim().to_string();
            continue;
        }
        if current == section
            && let Some((k, _)) = l.split_once('=')
            && k.trim().trim_matches('"') == key
        {
            return Some(i + 1);
        }
    }
    None
}

/// Replaces `${NAME}` with the environment variable's value.
pub fn expand_env(s: &str, origin: &str) -> Result<String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let Some(j) = after.find('}') else {
            return Err(Error::Invalid(format!("{origin}: unclosed `${{` in {s:?}")));
        };
        let name = &after[..j];
        let value = std::env::var(name).map_err(|_| {
            Error::Invalid(format!(
                "{origin}: {s:?} uses ${{{name}}}, which is not set in the environment"
            ))
        })?;
        out.push_str(&value);
        rest = &after[j + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct S {
        substeps: u32,
        integrator: String,
    }

    #[test]
    fn unknown_keys_get_their_path_and_a_suggestion() {
        let v: Value = toml::from_str::<Table>("substep = 2\nintegrator = 'x'")
            .unwrap()
            .into();
        let e = section::<S>(v, "simulate", "job.toml").unwrap_err().to_string();
        assert!(
            e.contains("unknown key `simulate.substep`") && e.contains("did you mean `substeps`"),
            "{e}"
        );
        let mut a: Table = toml::from_str("[x]\na = 1\nb = 2").unwrap();
        merge(&mut a, toml::from_str("[x]\nb = 3\nc = 4").unwrap());
        assert_eq!(a["x"]["a"].as_integer(), Some(1));
        assert_eq!(a["x"]["b"].as_integer(), Some(3));
        assert_eq!(a["x"]["c"].as_integer(), Some(4));
        // SAFETY: tests run in one process; the variable name is unique to this test.
        unsafe { std::env::set_var("TRESS_TEST_DIR_X", "/data") };
        assert_eq!(
            expand_env("${TRESS_TEST_DIR_X}/a.obj", "j").unwrap(),
            "/data/a.obj"
        );
        assert!(expand_env("${TRESS_NOPE_NOT_SET}/a", "j").is_err());
    }
}
