//! `rateLimits`: calls per caller per fixed window, compiled once per gate. The counting is the
//! state store's ([`crate::state::Settle::rates`]); this module says which limits a tool is under
//! and which counter a caller uses.

use ahash::AHashMap;
use sha2::{Digest, Sha256};

use crate::config::{RateLimitConfig, RatePer};
use crate::context::CallContext;
use crate::error::GateError;
use crate::policy::glob::Glob;
use crate::state::RateCheck;

/// One compiled limit.
#[derive(Debug, Clone)]
struct Limit {
    /// Stable across processes and gates: a digest of the entry (globs, per, max, window), so
    /// replicas with the same entry share its counters and a changed entry starts fresh ones.
    id: String,
    per: RatePer,
    max: u32,
    window_ms: u64,
}

/// The compiled `rateLimits` of a gate: which limits cover each tool.
#[derive(Debug, Clone, Default)]
pub struct RateLimits {
    limits: Vec<Limit>,
    by_tool: AHashMap<String, Vec<u16>>,
}

impl RateLimits {
    /// Compiles the entries against the declared tool names. `E_CONFIG` (naming the entry) for a
    /// glob that does not compile or matches no declared tool (a typo would silently lift the
    /// limit), `max` or `windowSeconds` of 0, an empty `tools`, or more than 1000 entries. With
    /// `warn` (a gate that learns its tools later, as the MCP proxy's does) a glob matching no
    /// declared tool is pushed there instead of refused: it applies once a matching tool exists.
    pub fn compile(entries: &[RateLimitConfig], tools: &[&str], mut warn: Option<&mut Vec<String>>) -> Result<RateLimits, GateError> {
        if entries.len() > 1000 {
            return Err(GateError::Config(format!("config at `rateLimits`: at most 1000 entries, got {}", entries.len())));
        }
        let mut out = RateLimits::default();
        for (i, e) in entries.iter().enumerate() {
            let at = |k: &str, why: String| GateError::Config(format!("config at `rateLimits[{i}]{k}`: {why}"));
            if e.max == 0 {
                return Err(at(".max", "expected at least 1 (remove the tool instead of limiting it to none)".into()));
            }
            if e.window_seconds == 0 || e.window_seconds > 366 * 86_400 {
                return Err(at(".windowSeconds", format!("expected 1 to 31622400 seconds, got {}", e.window_seconds)));
            }
            if e.tools.is_empty() {
                return Err(at(".tools", "expected at least one tool-name glob".into()));
            }
            let mut hit = vec![false; tools.len()];
            for (j, g) in e.tools.iter().enumerate() {
                let glob = Glob::compile(g).map_err(|err| at(&format!(".tools[{j}]"), err.to_string()))?;
                let mut any = false;
                for (k, t) in tools.iter().enumerate() {
                    if glob.matches(t) {
                        hit[k] = true;
                        any = true;
                    }
                }
                if !any {
                    let e = at(&format!(".tools[{j}]"), format!("`{g}` matches no declared tool"));
                    match warn.as_deref_mut() {
                        Some(list) => list.push(e.to_string()),
                        None => return Err(e),
                    }
                }
            }
            let idx = u16::try_from(out.limits.len()).unwrap_or(u16::MAX);
            for (k, t) in tools.iter().enumerate() {
                if hit[k] {
                    out.by_tool.entry((*t).to_owned()).or_default().push(idx);
                }
            }
            let mut h = Sha256::new();
            for g in &e.tools {
                h.update(g.as_bytes());
                h.update([0]);
            }
            h.update(format!("{:?}|{}|{}", e.per, e.max, e.window_seconds).as_bytes());
            let id = hex(&h.finalize()[..8]);
            out.limits.push(Limit { id, per: e.per, max: e.max, window_ms: e.window_seconds.saturating_mul(1000) });
        }
        Ok(out)
    }

    /// Whether any limit is configured.
    pub fn is_empty(&self) -> bool {
        self.limits.is_empty()
    }

    /// The counters `tool` called by `ctx` is checked against (none for an unlimited tool). The
    /// caller part of each key is a digest, so stores never hold subjects or sessions in clear.
    pub fn checks(&self, tool: &str, ctx: &CallContext) -> Vec<RateCheck> {
        let Some(idx) = self.by_tool.get(tool) else { return Vec::new() };
        idx.iter()
            .filter_map(|&i| self.limits.get(i as usize))
            .map(|l| {
                let who = match (l.per, ctx.subject.as_deref()) {
                    (RatePer::Subject, Some(s)) => format!("u\u{0}{s}"),
                    _ => format!("s\u{0}{}", ctx.state_scope()),
                };
                RateCheck { key: format!("{}:{}", l.id, hex(&Sha256::digest(who.as_bytes())[..12])), window_ms: l.window_ms, max: l.max }
            })
            .collect()
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(tools: &[&str], per: RatePer, max: u32) -> RateLimitConfig {
        RateLimitConfig { tools: tools.iter().map(|s| (*s).to_owned()).collect(), per, max, window_seconds: 60 }
    }

    #[test]
    fn covers_matching_tools_and_names_typos() {
        let r = RateLimits::compile(&[entry(&["send_*"], RatePer::Subject, 3)], &["send_mail", "send_sms", "read"], None).unwrap();
        let alice = CallContext { subject: Some("alice".into()), ..CallContext::default() };
        let bob = CallContext { subject: Some("bob".into()), ..CallContext::default() };
        let a = r.checks("send_mail", &alice);
        assert_eq!(a.len(), 1);
        assert_eq!(a, r.checks("send_sms", &alice), "one count shared by the entry's tools");
        assert_ne!(a, r.checks("send_mail", &bob));
        assert!(r.checks("read", &alice).is_empty());
        assert!(!a[0].key.contains("alice"));
        let e = RateLimits::compile(&[entry(&["sned_*"], RatePer::Subject, 3)], &["send_mail"], None).unwrap_err();
        assert!(e.to_string().contains("rateLimits[0].tools[0]") && e.to_string().contains("matches no declared tool"), "{e}");
        assert!(RateLimits::compile(&[entry(&["send_mail"], RatePer::Session, 0)], &["send_mail"], None).is_err());
    }

    #[test]
    fn a_learning_build_warns_of_globs_naming_tools_not_known_yet() {
        let mut warnings = Vec::new();
        let r = RateLimits::compile(&[entry(&["read_*"], RatePer::Session, 3)], &["write"], Some(&mut warnings)).unwrap();
        assert!(r.checks("write", &CallContext::default()).is_empty());
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("rateLimits[0].tools[0]") && warnings[0].contains("`read_*` matches no declared tool"), "{warnings:?}");
        // once the tool is declared (the proxy rebuilds its gate with the server's tools) it is limited
        let r = RateLimits::compile(&[entry(&["read_*"], RatePer::Session, 3)], &["write", "read_file"], Some(&mut Vec::new())).unwrap();
        assert_eq!(r.checks("read_file", &CallContext::default()).len(), 1);
        // the other limits stay errors either way
        assert!(RateLimits::compile(&[entry(&["read_*"], RatePer::Session, 0)], &["read_file"], Some(&mut Vec::new())).is_err());
    }

    #[test]
    fn ids_are_stable_and_follow_the_entry() {
        let a = RateLimits::compile(&[entry(&["t"], RatePer::Session, 3)], &["t"], None).unwrap();
        let b = RateLimits::compile(&[entry(&["t"], RatePer::Session, 3)], &["t", "u"], None).unwrap();
        let c = RateLimits::compile(&[entry(&["t"], RatePer::Session, 4)], &["t"], None).unwrap();
        let ctx = CallContext::default();
        assert_eq!(a.checks("t", &ctx), b.checks("t", &ctx));
        assert_ne!(a.checks("t", &ctx)[0].key, c.checks("t", &ctx)[0].key);
    }
}
