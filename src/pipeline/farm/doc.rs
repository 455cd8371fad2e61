//! A template as a tree written either as YAML (block style, the form people read and diff) or
//! as JSON (Open Job Description reads both; JSON for tools that generate or patch templates).
//! Only what templates need: ordered maps, sequences, strings, integers.

/// A template node.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// A string written unquoted in YAML (names and enum words the specification defines).
    Word(String),
    /// A string, single-quoted in YAML.
    Str(String),
    Int(i64),
    /// Keys in the order written.
    Map(Vec<(String, Node)>),
    Seq(Vec<Node>),
}

/// `Node::Str`.
pub fn s(v: impl Into<String>) -> Node {
    Node::Str(v.into())
}

/// `Node::Word`.
pub fn w(v: impl Into<String>) -> Node {
    Node::Word(v.into())
}

/// An ordered map from `(key, value)` pairs.
pub fn map<K: Into<String>>(entries: impl IntoIterator<Item = (K, Node)>) -> Node {
    Node::Map(entries.into_iter().map(|(k, v)| (k.into(), v)).collect())
}

/// YAML string literal (single-quoted; quotes doubled).
pub fn q(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

impl Node {
    /// Adds an entry to a map (no-op on other nodes).
    pub fn push(&mut self, key: &str, value: Node) {
        if let Node::Map(m) = self {
            m.push((key.to_string(), value));
        }
    }

    /// Block-style YAML.
    pub fn to_yaml(&self) -> String {
        let mut y = String::new();
        match self {
            Node::Map(m) => yaml_map(&mut y, m, 0, String::new()),
            Node::Seq(items) => yaml_seq(&mut y, items, 0),
            other => {
                y.push_str(&yaml_scalar(other));
                y.push('\n');
            }
        }
        y
    }

    /// Pretty-printed JSON (two-space indent, keys in order).
    pub fn to_json(&self) -> String {
        let mut j = String::new();
        json(&mut j, self, 0);
        j.push('\n');
        j
    }
}

fn yaml_scalar(n: &Node) -> String {
    match n {
        Node::Word(s) => s.clone(),
        Node::Str(s) => q(s),
        Node::Int(i) => i.to_string(),
        Node::Map(m) if m.is_empty() => "{}".into(),
        Node::Seq(v) if v.is_empty() => "[]".into(),
        _ => unreachable!("collections are written as blocks"),
    }
}

/// A map at indentation `ind`; `lead` precedes its first key (the indentation, or `- ` of the
/// sequence item it opens).
fn yaml_map(y: &mut String, m: &[(String, Node)], ind: usize, mut lead: String) {
    for (k, v) in m {
        y.push_str(&lead);
        y.push_str(k);
        y.push(':');
        match v {
            Node::Map(c) if !c.is_empty() => {
                y.push('\n');
                yaml_map(y, c, ind + 2, " ".repeat(ind + 2));
            }
            Node::Seq(c) if !c.is_empty() => {
                y.push('\n');
                yaml_seq(y, c, ind);
            }
            scalar => {
                y.push(' ');
                y.push_str(&yaml_scalar(scalar));
                y.push('\n');
            }
        }
        lead = " ".repeat(ind);
    }
}

/// A sequence whose dashes stand at indentation `ind`.
fn yaml_seq(y: &mut String, items: &[Node], ind: usize) {
    let dash = format!("{}- ", " ".repeat(ind));
    for it in items {
        match it {
            Node::Map(c) if !c.is_empty() => yaml_map(y, c, ind + 2, dash.clone()),
            Node::Seq(c) if !c.is_empty() => {
                y.push_str(dash.trim_end());
                y.push('\n');
                yaml_seq(y, c, ind + 2);
            }
            scalar => {
                y.push_str(&dash);
                y.push_str(&yaml_scalar(scalar));
                y.push('\n');
            }
        }
    }
}

fn json(j: &mut String, n: &Node, ind: usize) {
    let pad = |k: usize| " ".repeat(k);
    match n {
        Node::Word(s) | Node::Str(s) => j.push_str(&serde_json::Value::String(s.clone()).to_string()),
        Node::Int(i) => j.push_str(&i.to_string()),
        Node::Map(m) => {
            if m.is_empty() {
                j.push_str("{}");
                return;
            }
            j.push_str("{\n");
            for (i, (k, v)) in m.iter().enumerate() {
                j.push_str(&pad(ind + 2));
                j.push_str(&serde_json::Value::String(k.clone()).to_string());
                j.push_str(": ");
                json(j, v, ind + 2);
                j.push_str(if i + 1 < m.len() { ",\n" } else { "\n" });
            }
            j.push_str(&pad(ind));
            j.push('}');
        }
        Node::Seq(v) => {
            if v.is_empty() {
                j.push_str("[]");
                return;
            }
            j.push_str("[\n");
            for (i, x) in v.iter().enumerate() {
                j.push_str(&pad(ind + 2));
                json(j, x, ind + 2);
                j.push_str(if i + 1 < v.len() { ",\n" } else { "\n" });
            }
            j.push_str(&pad(ind));
            j.push(']');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Node {
        map([
            ("specificationVersion", s("jobtemplate-2023-09")),
            (
                "steps",
                Node::Seq(vec![map([
                    ("name", s("it's")),
                    (
                        "hostRequirements",
                        map([(
                            "amounts",
                            Node::Seq(vec![map([
                                ("name", w("amount.worker.vcpu")),
                                ("min", Node::Int(2)),
                            ])]),
                        )]),
                    ),
                    ("args", Node::Seq(vec![s("--threads"), s("2")])),
                ])]),
            ),
        ])
    }

    /// The YAML layout by hand: sequences at their key's indentation, maps two deeper,
    /// single quotes doubled.
    #[test]
    fn yaml_block_layout() {
        assert_eq!(
            sample().to_yaml(),
            "specificationVersion: 'jobtemplate-2023-09'\nsteps:\n- name: 'it''s'\n  hostRequirements:\n    amounts:\n    - name: amount.worker.vcpu\n      min: 2\n  args:\n  - '--threads'\n  - '2'\n"
        );
    }

    /// JSON parses back (serde_json, an independent reader) to the same tree, in order.
    #[test]
    fn json_parses_to_the_same_values() {
        let v: serde_json::Value = serde_json::from_str(&sample().to_json()).unwrap();
        assert_eq!(v["specificationVersion"], "jobtemplate-2023-09");
        assert_eq!(v["steps"][0]["name"], "it's");
        assert_eq!(v["steps"][0]["hostRequirements"]["amounts"][0]["min"], 2);
        assert_eq!(v["steps"][0]["args"][1], "2");
        let text = sample().to_json();
        assert!(text.find("specificationVersion").unwrap() < text.find("steps").unwrap());
    }
}
