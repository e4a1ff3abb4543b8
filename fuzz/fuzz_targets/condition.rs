//! Fuzzes the policy condition language (`toolgate_core::policy::condition::Condition`) and
//! the glob matcher (`toolgate_core::policy::glob::Glob`) with arbitrary bytes: both compile
//! config text, and globs match model-chosen text. Seeds in `corpus/condition/` (regenerate
//! with `node fuzz/seeds.mjs`).
//!
//! Oracle (a panic or a hang = a finding):
//! - the input, if UTF-8, is parsed as a condition; `parse` never panics; an error points at a
//!   line and column inside the source (or just past its end) and has a message;
//! - a parsed condition evaluates against a fixed, non-trivial scope and against the same scope
//!   while listing; a call's evaluation is never `Unknown`; a definite listing result equals the
//!   call's result (Kleene logic: knowing `args`/`resource` cannot change a definite answer);
//!   a condition that does not `reads_call()` gives the same answer with the call facts gone;
//! - the input split at its first NUL is (pattern, text); `Glob::compile` never panics; a
//!   compiled glob agrees with a slow reference matcher (below) with and without a subject,
//!   `matches_with` is `None` exactly when a placeholder has no subject, and a literal pattern
//!   matches exactly its literal text.

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value};
use toolgate_core::policy::condition::{Condition, Truth};
use toolgate_core::policy::glob::Glob;
use toolgate_core::policy::scope::Scope;

struct Facts {
    roles: Vec<String>,
    identity: Map<String, Value>,
    context: Map<String, Value>,
    args: Map<String, Value>,
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => unreachable!("an object literal"),
    }
}

fn facts() -> &'static Facts {
    static FACTS: OnceLock<Facts> = OnceLock::new();
    FACTS.get_or_init(|| Facts {
        roles: vec!["analyst".into(), "verifier".into(), "".into()],
        identity: object(json!({
            "tenant": "acme", "admin": true, "level": 3, "exp": 1_900_000_000u64, "nothing": null,
            "org": { "id": "o-1", "teams": ["red", "blue", 7] }, "big": u64::MAX, "ratio": -0.5
        })),
        context: object(json!({ "tenant": "acme", "region": "eu", "": "empty" })),
        args: object(json!({
            "amount": 50, "path": "reports/q1.pdf", "tags": ["a", "b", 3, null, true],
            "odd key": "x", "nested": { "deep": { "n": -2, "list": [[1], {"k": "v"}] } },
            "dry": true, "n": 1e300
        })),
    })
}

fn scope(f: &Facts, listing: bool, call: bool) -> Scope<'_> {
    Scope {
        roles: &f.roles,
        identity: Some(&f.identity),
        purpose: Some("audit"),
        context: Some(&f.context),
        subject: Some("ann"),
        tool: call.then_some("read_file"),
        action: call.then_some("read"),
        resource: call.then_some("file:reports/q1.pdf"),
        resource_folded: false,
        args: call.then_some(&f.args),
        listing,
        // 2026-03-04T10:30:00.123Z, a Wednesday
        now_ms: 1_772_620_200_123,
    }
}

fn condition(src: &str) {
    match Condition::parse(src) {
        Ok(c) => {
            assert_eq!(c.source(), src);
            let f = facts();
            let call = c.eval(&scope(f, false, true));
            // a deny rule's (fail-closed) reading never panics either
            std::hint::black_box(c.eval_deny(&scope(f, false, true)));
            let listing = c.eval(&scope(f, true, true));
            assert_ne!(call, Truth::Unknown, "a call is never unknown: {src}");
            if listing != Truth::Unknown {
                assert_eq!(listing, call, "a definite listing answer changed with the call: {src}");
            }
            if !c.reads_call() {
                assert_eq!(c.eval(&scope(f, false, false)), call, "reads call facts: {src}");
                assert_eq!(listing, call, "unknown without reading call facts: {src}");
            }
        }
        Err(e) => {
            assert!(!e.message.is_empty());
            let lines: Vec<&str> = src.split('\n').collect();
            assert!(e.line >= 1 && e.line <= lines.len(), "line {} of {}: {e}", e.line, lines.len());
            let len = lines[e.line - 1].chars().count();
            assert!(e.column >= 1 && e.column <= len + 1, "column {} of {len}: {e}", e.column);
        }
    }
}

/// The reference: `pattern` tokenized independently and matched by an O(n·m) table.
fn reference(pattern: &str, text: &str, subject: &str) -> bool {
    #[derive(Clone, Copy)]
    enum T {
        C(char),
        Any,
        Star,
        Globstar,
    }
    let pc: Vec<char> = pattern.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < pc.len() {
        let step = match pc[i] {
            '\\' => {
                toks.push(T::C(pc[i + 1]));
                2
            }
            '*' => {
                let run = pc[i..].iter().take_while(|&&c| c == '*').count();
                toks.push(if run > 1 { T::Globstar } else { T::Star });
                run
            }
            '?' => {
                toks.push(T::Any);
                1
            }
            '{' if pc[i..].iter().take(9).copied().eq("{subject}".chars()) => {
                toks.extend(subject.chars().map(T::C));
                9
            }
            c => {
                toks.push(T::C(c));
                1
            }
        };
        i += step;
    }
    let tc: Vec<char> = text.chars().collect();
    // row[k]: toks[j..] matches tc[k..], computed for j from the end.
    let mut row = vec![false; tc.len() + 1];
    row[tc.len()] = true;
    for tok in toks.iter().rev() {
        let mut next = vec![false; tc.len() + 1];
        for k in (0..=tc.len()).rev() {
            let c = tc.get(k).copied();
            next[k] = match *tok {
                T::C(want) => c == Some(want) && row[k + 1],
                T::Any => c.is_some_and(|c| c != '/') && row[k + 1],
                T::Star => row[k] || (c.is_some_and(|c| c != '/') && next[k + 1]),
                T::Globstar => row[k] || (c.is_some() && next[k + 1]),
            };
        }
        row = next;
    }
    row[0]
}

fn glob(pattern: &str, text: &str) {
    let g = match Glob::compile(pattern) {
        Ok(g) => g,
        Err(e) => {
            assert!(e.at() >= 1 && e.at() <= pattern.chars().count() + 1, "{e}");
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    assert_eq!(g.source(), pattern);
    let plain = g.matches(text);
    assert_eq!(g.matches_with(text, None).is_none(), g.needs_subject());
    if let Some(lit) = g.is_literal() {
        assert_eq!(plain, text == lit);
    }
    if g.needs_subject() {
        assert!(!plain);
    }
    // The subject takes its characters from the text, so a placeholder can match.
    let subject: String = text.chars().take(3).collect();
    for s in ["", "ann", "a*b?", subject.as_str()] {
        let got = g.matches_with(text, Some(s));
        if !g.needs_subject() {
            assert_eq!(got, Some(plain));
        }
        // The reference is quadratic: keep it to inputs where that is quick.
        if pattern.len() + s.len() <= 512 && text.len() <= 512 {
            assert_eq!(got, Some(reference(pattern, text, s)), "{pattern:?} {text:?} {s:?}");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(src) = std::str::from_utf8(data) {
        condition(src);
    }
    let cut = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let pattern = String::from_utf8_lossy(&data[..cut]);
    let text = String::from_utf8_lossy(data.get(cut + 1..).unwrap_or_default());
    glob(&pattern, &text);
});
