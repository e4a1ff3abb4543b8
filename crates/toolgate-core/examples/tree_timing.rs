//! What a tree the core owned would save on a turn: the MCP corpus's three-call completion
//! (`bench/corpus/mcp/turn.json`, 828 bytes) parsed by the same serde_json parser into
//! (1) `serde_json::Value` with `preserve_order`, the tree every codec, the repair walk and the
//! `jsonschema` validator read today (an `IndexMap` per object, SipHash per key, a `String` per
//! key and string); (2) a borrowed tree — strings borrowed where they hold no escape, objects as
//! vectors of members, a key written twice still refused — the data model docs/performance.md
//! ("The floor") weighs against a rewrite; (3) no tree at all (`IgnoredAny`: the scan alone).
//! `cargo run --release -p toolgate-core --example tree_timing`
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::borrow::Cow;
use std::fmt;
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON value borrowing from its text (fields are read only by `black_box`).
#[allow(dead_code)]
enum Tree<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(Cow<'a, str>),
    Array(Vec<Tree<'a>>),
    Object(Vec<(Cow<'a, str>, Tree<'a>)>),
}

struct TreeSeed;

impl<'de> DeserializeSeed<'de> for TreeSeed {
    type Value = Tree<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Tree<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TreeSeed {
    type Value = Tree<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Tree<'de>, E> {
        Ok(Tree::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Tree<'de>, E> {
        Ok(Tree::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Tree<'de>, E> {
        Ok(Tree::Int(n))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Tree<'de>, E> {
        Ok(Tree::Uint(n))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Tree<'de>, E> {
        Ok(Tree::Float(n))
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Tree<'de>, E> {
        Ok(Tree::Str(Cow::Borrowed(s)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Tree<'de>, E> {
        Ok(Tree::Str(Cow::Owned(s.to_owned())))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Tree<'de>, A::Error> {
        let mut items = Vec::new();
        while let Some(x) = a.next_element_seed(TreeSeed)? {
            items.push(x);
        }
        Ok(Tree::Array(items))
    }
    fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<Tree<'de>, M::Error> {
        let mut members: Vec<(Cow<'de, str>, Tree<'de>)> = Vec::new();
        while let Some(key) = m.next_key_seed(KeySeed)? {
            // a strict parse refuses a key written twice; objects of a turn are small
            if members.iter().any(|(k, _)| *k == key) {
                return Err(de::Error::custom(format!("duplicate key {key}")));
            }
            let value = m.next_value_seed(TreeSeed)?;
            members.push((key, value));
        }
        Ok(Tree::Object(members))
    }
}

struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(s))
    }
    fn visit_str<E>(self, s: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(s.to_owned()))
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/corpus/mcp/turn.json");
    let turn = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let (mut value, mut tree, mut scan) = (Vec::new(), Vec::new(), Vec::new());
    // interleaved, a block of 1,000 parses per sample
    for round in 0..330 {
        let t = Instant::now();
        for _ in 0..1_000 {
            black_box(serde_json::from_str::<serde_json::Value>(black_box(&turn)).expect("the turn parses"));
        }
        let a = t.elapsed().as_nanos() as f64 / 1e3;
        let t = Instant::now();
        for _ in 0..1_000 {
            let mut de = serde_json::Deserializer::from_str(black_box(&turn));
            black_box(TreeSeed.deserialize(&mut de).expect("the turn parses"));
        }
        let b = t.elapsed().as_nanos() as f64 / 1e3;
        let t = Instant::now();
        for _ in 0..1_000 {
            black_box(serde_json::from_str::<de::IgnoredAny>(black_box(&turn)).expect("the turn parses"));
        }
        let c = t.elapsed().as_nanos() as f64 / 1e3;
        if round >= 30 {
            value.push(a);
            tree.push(b);
            scan.push(c);
        }
    }
    let (v, t, s) = (median(value), median(tree), median(scan));
    println!("the turn's completion ({} bytes), ns per parse, median of 300 blocks:", turn.len());
    println!("  serde_json::Value (preserve_order)  {v:>6.0}");
    println!("  a borrowed tree (vector maps)       {t:>6.0}  ({:.2}×)", t / v);
    println!("  the scan alone (no tree)            {s:>6.0}  ({:.2}×)", s / v);
}
