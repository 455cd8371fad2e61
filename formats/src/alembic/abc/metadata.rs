//! Alembic metadata: an ordered string map serialized as `key=value;key=value`, keys sorted
//! bytewise, empty values omitted, no trailing separator.

use std::collections::BTreeMap;

use crate::error::{Error, Result};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MetaData(BTreeMap<String, String>);

impl MetaData {
    pub fn new() -> Self {
        MetaData(BTreeMap::new())
    }

    /// Builds metadata from pairs (later pairs win).
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        MetaData(
            pairs
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        if [key, value].iter().any(|s| s.contains(';') || s.contains('=')) {
            return Err(Error::invalid(format!(
                "metadata {key:?}={value:?}: Alembic metadata cannot contain ';' or '='"
            )));
        }
        self.0.insert(key.to_string(), value.to_string());
        Ok(())
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    pub fn is_empty(&self) -> bool {
        self.serialize().is_empty()
    }

    pub fn serialize(&self) -> String {
        let mut out = String::new();
        for (k, v) in &self.0 {
            if v.is_empty() {
                continue;
            }
            if !out.is_empty() {
                out.push(';');
            }
            out.push_str(k);
            out.push('=');
            out.push_str(v);
        }
        out
    }

    /// Parses as the official reader does: a pair whose `=` comes after the next `;` ends the
    /// parse, and the first occurrence of a key wins.
    pub fn parse(text: &str) -> MetaData {
        let mut map = BTreeMap::new();
        let mut rest = text;
        while !rest.is_empty() {
            let semi = rest.find(';');
            let Some(eq) = rest.find('=') else { break };
            if semi.is_some_and(|s| eq > s) {
                break;
            }
            let end = semi.unwrap_or(rest.len());
            let key = &rest[..eq];
            let value = &rest[eq + 1..end];
            map.entry(key.to_string()).or_insert_with(|| value.to_string());
            rest = if end < rest.len() { &rest[end + 1..] } else { "" };
        }
        MetaData(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_without_empty_values() {
        let m = MetaData::from_pairs([
            ("schema", "AbcGeom_Curve_v2"),
            ("a", ""),
            ("_ai_DCC_FPS", "24.000000"),
            ("_ai_Application", "x"),
        ]);
        assert_eq!(
            m.serialize(),
            "_ai_Application=x;_ai_DCC_FPS=24.000000;schema=AbcGeom_Curve_v2"
        );
        assert_eq!(
            MetaData::parse(&m.serialize()),
            MetaData::from_pairs([
                ("schema", "AbcGeom_Curve_v2"),
                ("_ai_DCC_FPS", "24.000000"),
                ("_ai_Application", "x")
            ])
        );
    }

    #[test]
    fn parse_like_the_library() {
        let m = MetaData::parse("a=1;a=2;b=x=y;c");
        assert_eq!(m.get("a"), Some("1"));
        assert_eq!(m.get("b"), Some("x=y"));
        assert_eq!(m.get("c"), None);
        // A pair without '=' before the next ';' stops parsing.
        let m = MetaData::parse("a=1;broken;b=2");
        assert_eq!(m.get("b"), None);
        assert!(MetaData::new().set("k", "a;b").is_err());
    }
}
