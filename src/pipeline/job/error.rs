//! Errors in job files: the file, the line of the key when the file sets it, the key, and what
//! is wrong.

use std::collections::BTreeMap;
use std::fmt;

use toml::de::{DeTable, DeValue};

/// An error in a job file.
#[derive(Clone, Debug, PartialEq)]
pub struct JobError {
    /// The job file (or what a job built in code calls itself).
    pub origin: String,
    /// The line (1-based) of the key in the file, when the file sets it.
    pub line: Option<usize>,
    /// The key, as a dotted path (`groom.preset`, `colliders[0].radius`).
    pub key: String,
    /// What is wrong, naming the key as the user wrote it.
    pub message: String,
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: {}", self.origin, self.message),
            None => write!(f, "{}: {}", self.origin, self.message),
        }
    }
}

impl From<JobError> for crate::Error {
    fn from(e: JobError) -> crate::Error {
        crate::Error::Invalid(e.to_string())
    }
}

/// The line of every key a TOML text sets, by dotted path (array-of-tables items as
/// `name[i]`), from the parser's spans.
pub fn key_lines(text: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    let Ok(table) = DeTable::parse(text) else {
        return out;
    };
    let line = |at: usize| text[..at.min(text.len())].matches('\n').count() + 1;
    fn walk(t: &DeTable, prefix: &str, line: &dyn Fn(usize) -> usize, out: &mut BTreeMap<String, usize>) {
        for (k, v) in t.iter() {
            let path = match prefix {
                "" => k.get_ref().to_string(),
                p => format!("{p}.{}", k.get_ref()),
            };
            out.entry(path.clone()).or_insert(line(k.span().start));
            match v.get_ref() {
                DeValue::Table(t) => walk(t, &path, line, out),
                DeValue::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        let at = format!("{path}[{i}]");
                        out.entry(at.clone()).or_insert(line(item.span().start));
                        if let DeValue::Table(t) = item.get_ref() {
                            walk(t, &at, line, out);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    walk(table.get_ref(), "", &line, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_found_on_their_lines() {
        let text = "name = 'x'\n\n[groom]\npreset = 'wavy'\n[motion]\nvelocity = [1.0, 0, 0]\n\n[[colliders]]\nshape = 'sphere'\n[[colliders]]\nradius = 2.0\n";
        let l = key_lines(text);
        assert_eq!(l["name"], 1);
        assert_eq!(l["groom"], 3);
        assert_eq!(l["groom.preset"], 4);
        assert_eq!(l["motion.velocity"], 6);
        assert_eq!(l["colliders[1].radius"], 11);
        assert_eq!(l["colliders[0].shape"], 9);
        assert!(!l.contains_key("groom.file"));
        let e = JobError {
            origin: "job.toml".into(),
            line: Some(4),
            key: "groom.preset".into(),
            message: "groom.preset: no such preset".into(),
        };
        assert_eq!(e.to_string(), "job.toml:4: groom.preset: no such preset");
    }
}
