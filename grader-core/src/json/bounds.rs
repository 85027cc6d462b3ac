//! How much work validating a value against a schema can take, counted before the validation
//! runs, so that no schema and answer stall a grader (SPEC D35): an upper bound on the pairs
//! (subschema, part of the value) the validator may visit, following `$ref`s (each reference
//! target's count worked out once per part of the value, so a chain of `anyOf`s that doubles
//! at each step is counted, not walked), and on the matches of patterns that need a
//! backtracking engine (backreferences, lookarounds), whose steps are bounded per match.

use std::collections::HashMap;

use serde_json::Value;

/// The most (subschema, part of the value) pairs one validation may visit: 2 million.
pub const MAX_PAIRS: u64 = 2_000_000;

/// The most backtracking steps of the patterns of one validation, summed: 10 million.
pub const MAX_REGEX_STEPS: u64 = 10_000_000;

/// The most references followed in a row without reading deeper into the value.
const MAX_REFERENCE_CHAIN: usize = 512;

/// What validating a value may cost, at most: see [`JsonSchema::cost`](super::JsonSchema::cost).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cost {
    /// (subschema, part of the value) pairs the validator may visit.
    pub pairs: u64,
    /// Matches of patterns that need a backtracking engine (backreferences, lookarounds).
    pub backtracking: u64,
}

/// Why a validation is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Past {
    /// More pairs than [`MAX_PAIRS`].
    Pairs,
    /// References chained deeper than [`MAX_REFERENCE_CHAIN`].
    Chain,
}

/// Whether a pattern needs a backtracking engine (the `regex` crate refuses it).
pub(crate) fn backtracks(pattern: &str) -> bool {
    let bytes = pattern.as_bytes();
    let mut i = 0;
    while i + 1 < bytes.len() {
        match (bytes[i], bytes[i + 1]) {
            (b'\\', b'1'..=b'9' | b'k') => return true,
            (b'\\', _) => i += 2,
            (b'(', b'?') => {
                let rest = &pattern[i + 2..];
                if rest.starts_with('=')
                    || rest.starts_with('!')
                    || rest.starts_with("<=")
                    || rest.starts_with("<!")
                    || rest.starts_with('>')
                {
                    return true;
                }
                i += 2;
            }
            _ => i += 1,
        }
    }
    false
}

/// The schema's resources and anchors, by URI (as JSON Pointers into the schema), and each
/// object's base URI (by its address: the index belongs to one schema value that does not move
/// or change while it lives).
pub(crate) struct Index {
    resources: HashMap<String, String>,
    anchors: HashMap<String, Vec<String>>,
    bases: HashMap<usize, String>,
}

fn address(value: &Value) -> usize {
    std::ptr::from_ref(value) as usize
}

/// Whether `reference` has a scheme (`https:`, `urn:`).
fn has_scheme(reference: &str) -> bool {
    let mut chars = reference.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && reference.split_once(':').is_some_and(|(scheme, _)| {
            scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
        })
}

/// `reference` resolved against `base` (RFC 3986, enough of it for schemas' `$id`s and
/// `$ref`s).
fn join(base: &str, reference: &str) -> String {
    if has_scheme(reference) {
        return reference.to_owned();
    }
    let base = base.split('#').next().unwrap_or_default();
    if reference.starts_with('#') || reference.is_empty() {
        return format!("{base}{reference}");
    }
    if let Some(rest) = reference.strip_prefix("//") {
        let scheme = base.split_once(':').map_or("", |(s, _)| s);
        return format!("{scheme}://{rest}");
    }
    // The base's scheme and authority, then its directory.
    let (origin, path) = match base.find("://") {
        Some(k) => {
            let after = &base[k + 3..];
            let slash = after.find('/').map_or(base.len(), |j| k + 3 + j);
            (&base[..slash], &base[slash..])
        }
        None => ("", base),
    };
    if reference.starts_with('/') {
        return format!("{origin}{reference}");
    }
    let directory = path.rfind('/').map_or("", |k| &path[..=k]);
    let joined = format!("{directory}{reference}");
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.split('/') {
        match part {
            "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    format!("{origin}{}", parts.join("/"))
}

fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn pointer_escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

impl Index {
    /// Indexes `root` (its `$id`s, `id`s and anchors), walking it without recursion.
    pub(crate) fn new(root: &Value) -> Self {
        let mut index = Self {
            resources: HashMap::new(),
            anchors: HashMap::new(),
            bases: HashMap::new(),
        };
        index.resources.insert(String::new(), String::new());
        let mut stack: Vec<(&Value, String, String)> = vec![(root, String::new(), String::new())];
        while let Some((value, base, path)) = stack.pop() {
            match value {
                Value::Object(map) => {
                    let mut base = base;
                    let id = map
                        .get("$id")
                        .or_else(|| map.get("id").filter(|_| !map.contains_key("$id")))
                        .and_then(Value::as_str);
                    if let Some(id) = id {
                        let joined = join(&base, id);
                        match joined.split_once('#') {
                            Some((uri, anchor)) if !anchor.is_empty() => {
                                index
                                    .anchors
                                    .entry(format!("{uri}#{anchor}"))
                                    .or_default()
                                    .push(path.clone());
                                base = uri.to_owned();
                            }
                            Some((uri, _)) => base = uri.to_owned(),
                            None => base = joined,
                        }
                        index.resources.insert(base.clone(), path.clone());
                    }
                    for key in ["$anchor", "$dynamicAnchor"] {
                        if let Some(name) = map.get(key).and_then(Value::as_str) {
                            for anchor in [format!("{base}#{name}"), format!("#dynamic:{name}")] {
                                index.anchors.entry(anchor).or_default().push(path.clone());
                            }
                        }
                    }
                    index.bases.insert(address(value), base.clone());
                    for (key, child) in map {
                        let child_path = format!("{path}/{}", pointer_escape(key));
                        stack.push((child, base.clone(), child_path));
                    }
                }
                Value::Array(items) => {
                    for (i, child) in items.iter().enumerate() {
                        stack.push((child, base.clone(), format!("{path}/{i}")));
                    }
                }
                _ => {}
            }
        }
        index
    }

    /// The subschemas of `root` a reference in `from` may lead to (several for a dynamic
    /// one).
    fn targets<'s>(
        &self,
        root: &'s Value,
        from: &Value,
        reference: &str,
        dynamic: bool,
    ) -> Vec<&'s Value> {
        let at = |path: &str| root.pointer(path);
        let base = self.bases.get(&address(from)).map_or("", String::as_str);
        let target = join(base, reference);
        let (uri, fragment) = target.split_once('#').unwrap_or((target.as_str(), ""));
        let fragment = percent_decoded(fragment);
        if dynamic
            && !fragment.is_empty()
            && !fragment.starts_with('/')
            && let Some(all) = self.anchors.get(&format!("#dynamic:{fragment}"))
        {
            return all.iter().filter_map(|p| at(p)).collect();
        }
        let resource = match self.resources.get(uri) {
            Some(path) => at(path),
            None if uri.is_empty() || !has_scheme(uri) => Some(root),
            None => None,
        };
        let Some(resource) = resource else {
            return Vec::new();
        };
        if fragment.is_empty() {
            return vec![resource];
        }
        if fragment.starts_with('/') {
            return resource
                .pointer(&fragment)
                .or_else(|| root.pointer(&fragment))
                .into_iter()
                .collect();
        }
        self.anchors
            .get(&format!("{uri}#{fragment}"))
            .into_iter()
            .flatten()
            .filter_map(|p| at(p))
            .collect()
    }
}

/// The nodes of `value`, counted without recursion (for a reference the index cannot follow,
/// as to a bundled meta-schema: the validation may visit every node).
fn size(value: &Value) -> u64 {
    let mut count = 0u64;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        count += 1;
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    count
}

/// The counter.
pub(crate) struct Estimate<'s> {
    root: &'s Value,
    index: &'s Index,
    memo: HashMap<(usize, usize), Cost>,
    open: Vec<(usize, usize)>,
    chain: usize,
    visited: u64,
}

impl Cost {
    fn add(&mut self, other: Cost) -> Result<(), Past> {
        self.pairs = self.pairs.saturating_add(other.pairs);
        self.backtracking = self.backtracking.saturating_add(other.backtracking);
        if self.pairs > MAX_PAIRS {
            return Err(Past::Pairs);
        }
        Ok(())
    }
}

impl<'s> Estimate<'s> {
    /// A counter for `schema`, indexed by `index` (made from `schema`).
    pub(crate) fn new(schema: &'s Value, index: &'s Index) -> Self {
        Self {
            root: schema,
            index,
            memo: HashMap::new(),
            open: Vec::new(),
            chain: 0,
            visited: 0,
        }
    }

    /// The cost of validating `instance` against the whole schema.
    pub(crate) fn of(&mut self, instance: &Value) -> Result<Cost, Past> {
        self.memo.clear();
        self.visited = 0;
        self.cost(self.root, instance, true)
    }

    /// The cost of `schema` on `instance`; `stable` where `instance` lives as long as the
    /// count (not a property name made for `propertyNames`), so that it may be remembered.
    fn cost(&mut self, schema: &'s Value, instance: &Value, stable: bool) -> Result<Cost, Past> {
        self.visited += 1;
        if self.visited > MAX_PAIRS {
            return Err(Past::Pairs);
        }
        let mut total = Cost {
            pairs: 1,
            backtracking: 0,
        };
        let Value::Object(map) = schema else {
            return Ok(total);
        };
        for (keyword, sub) in map {
            match keyword.as_str() {
                "allOf" | "anyOf" | "oneOf" => {
                    for s in sub.as_array().into_iter().flatten() {
                        total.add(self.cost(s, instance, stable)?)?;
                    }
                }
                "not" | "if" | "then" | "else" => total.add(self.cost(sub, instance, stable)?)?,
                "$ref" | "$dynamicRef" | "$recursiveRef" => {
                    if let Some(reference) = sub.as_str() {
                        let dynamic = keyword != "$ref";
                        total.add(self.reference(schema, reference, dynamic, instance, stable)?)?;
                    }
                }
                "dependentSchemas" | "dependencies" => {
                    if let (Value::Object(deps), Value::Object(object)) = (sub, instance) {
                        for (property, s) in deps {
                            if object.contains_key(property) && !s.is_array() {
                                total.add(self.cost(s, instance, stable)?)?;
                            }
                        }
                    }
                }
                "properties" => {
                    if let (Value::Object(props), Value::Object(object)) = (sub, instance) {
                        for (property, s) in props {
                            if let Some(x) = object.get(property) {
                                total.add(self.cost(s, x, stable)?)?;
                            }
                        }
                    }
                }
                "patternProperties" => {
                    if let (Value::Object(patterns), Value::Object(object)) = (sub, instance) {
                        for (pattern, s) in patterns {
                            let slow = backtracks(pattern);
                            for x in object.values() {
                                if slow {
                                    total.backtracking = total.backtracking.saturating_add(1);
                                }
                                total.add(self.cost(s, x, stable)?)?;
                            }
                        }
                    }
                }
                "additionalProperties" | "unevaluatedProperties" => {
                    if let Value::Object(object) = instance {
                        total.add(self.each(sub, object.values(), stable)?)?;
                    }
                }
                "propertyNames" => {
                    if let Value::Object(object) = instance {
                        for key in object.keys() {
                            let name = Value::String(key.clone());
                            total.add(self.cost(sub, &name, false)?)?;
                        }
                    }
                }
                "items" => {
                    if let Value::Array(items) = instance {
                        if let Value::Array(schemas) = sub {
                            for (s, x) in schemas.iter().zip(items) {
                                total.add(self.cost(s, x, stable)?)?;
                            }
                        } else {
                            total.add(self.each(sub, items.iter(), stable)?)?;
                        }
                    }
                }
                "prefixItems" => {
                    if let (Value::Array(schemas), Value::Array(items)) = (sub, instance) {
                        for (s, x) in schemas.iter().zip(items) {
                            total.add(self.cost(s, x, stable)?)?;
                        }
                    }
                }
                "additionalItems" | "unevaluatedItems" | "contains" => {
                    if let Value::Array(items) = instance {
                        total.add(self.each(sub, items.iter(), stable)?)?;
                    }
                }
                "pattern" if instance.is_string() && sub.as_str().is_some_and(backtracks) => {
                    total.backtracking = total.backtracking.saturating_add(1);
                }
                "enum" => {
                    let n = sub.as_array().map_or(1, Vec::len) as u64;
                    total.add(Cost {
                        pairs: n,
                        backtracking: 0,
                    })?;
                }
                _ => {}
            }
        }
        Ok(total)
    }

    fn each<'v>(
        &mut self,
        schema: &'s Value,
        items: impl Iterator<Item = &'v Value>,
        stable: bool,
    ) -> Result<Cost, Past> {
        let mut total = Cost::default();
        for x in items {
            total.add(self.cost(schema, x, stable)?)?;
        }
        Ok(total)
    }

    fn reference(
        &mut self,
        from: &'s Value,
        reference: &str,
        dynamic: bool,
        instance: &Value,
        stable: bool,
    ) -> Result<Cost, Past> {
        let targets = self.index.targets(self.root, from, reference, dynamic);
        if targets.is_empty() {
            // Not in the schema (a bundled meta-schema): every node may be visited, often.
            return Ok(Cost {
                pairs: size(instance).saturating_mul(100),
                backtracking: 0,
            });
        }
        let mut worst = Cost::default();
        for target in targets {
            let key = (address(target), address(instance));
            if stable && let Some(known) = self.memo.get(&key) {
                worst = worst.max_with(*known);
                continue;
            }
            if self.open.contains(&key) {
                // A loop that reads nothing deeper: the validator stops it.
                continue;
            }
            self.chain += 1;
            if self.chain > MAX_REFERENCE_CHAIN {
                self.chain -= 1;
                return Err(Past::Chain);
            }
            self.open.push(key);
            let cost = self.cost(target, instance, stable);
            self.open.pop();
            self.chain -= 1;
            let cost = cost?;
            if stable {
                self.memo.insert(key, cost);
            }
            worst = worst.max_with(cost);
        }
        Ok(worst)
    }
}

impl Cost {
    fn max_with(self, other: Cost) -> Cost {
        Cost {
            pairs: self.pairs.max(other.pairs),
            backtracking: self.backtracking.max(other.backtracking),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn uris_join() {
        assert_eq!(join("", "#/$defs/a"), "#/$defs/a");
        assert_eq!(
            join("https://x.io/a/b.json", "c.json"),
            "https://x.io/a/c.json"
        );
        assert_eq!(
            join("https://x.io/a/b.json", "/c.json#/x"),
            "https://x.io/c.json#/x"
        );
        assert_eq!(
            join("https://x.io/a/b.json", "#y"),
            "https://x.io/a/b.json#y"
        );
        assert_eq!(join("https://x.io/a/", "../c"), "https://x.io/c");
        assert_eq!(join("urn:x", "https://y.io"), "https://y.io");
    }

    #[test]
    fn patterns_that_backtrack() {
        assert!(backtracks("^(a|a)*\\1b$"));
        assert!(backtracks("(?=x)y"));
        assert!(backtracks("(?<!a)b"));
        assert!(!backtracks("^[a-z]+\\d*$"));
        assert!(!backtracks("(?:ab)+"));
        assert!(!backtracks("\\\\1"));
    }

    #[test]
    fn doubling_chains_are_counted_not_walked() {
        let mut defs = serde_json::Map::new();
        for i in 0..40 {
            let next = format!("#/$defs/d{}", i + 1);
            defs.insert(
                format!("d{i}"),
                json!({"anyOf": [{"$ref": next}, {"$ref": next}]}),
            );
        }
        defs.insert("d40".into(), json!({"type": "string"}));
        let schema = json!({"$defs": defs, "$ref": "#/$defs/d0"});
        let index = Index::new(&schema);
        let mut estimate = Estimate::new(&schema, &index);
        assert_eq!(estimate.of(&json!(1)), Err(Past::Pairs));
        assert!(estimate.visited < 1_000, "{}", estimate.visited);
        let small = json!({"$defs": {"a": {"type": "integer"}}, "anyOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/a"}]});
        let index = Index::new(&small);
        let cost = Estimate::new(&small, &index).of(&json!(1)).expect("small");
        assert!(cost.pairs < 10, "{cost:?}");
    }
}
