//! The member names the codecs read, and the keys that only look like them.
//!
//! A codec matches member names exactly: `tool_calls` is read, `Tool_Calls` is not. Go's
//! `encoding/json` and .NET's case-insensitive binding match them without regard to case (Go
//! also folds the Kelvin sign `K` to `k` and the long s `ſ` to `s`, and keeps the last of several
//! matches), so a payload holding `"Tool_Calls": [...]`, or `"TOOL_CALLS"` beside `"tool_calls"`,
//! would show the gate one call list and such a host another. Outside the calls' argument values
//! (governed by the case-twin hazard, `json::hazards`), a key equal under case folding to one of
//! [`MEMBERS`] but not spelled as it, or two keys of one object equal under folding, make the
//! payload (or the stream event) `E_PAYLOAD`.
//!
//! The parser notices such keys on the way ([`classify`], allocation-free); only then is the
//! payload walked again ([`find`]) to name the key, skipping the calls' argument values.

use std::sync::OnceLock;

use ahash::{AHashMap, AHashSet};
use serde_json::{Map, Value};

use crate::json::hazards::case_twins;
use crate::json::pointer::Seg;

/// Every identifier-like string literal of the codecs and stream assemblers (`dialect/*.rs`,
/// `stream/*.rs`): the member names they read, and some values (over-strict, never lax). A test
/// keeps this list in step with the sources; add a name here when a codec starts reading it.
#[rustfmt::skip]
pub const MEMBERS: &[&str] = &[
    "action", "actions", "additional_kwargs", "additional_tools", "ai", "anthropic", "apply_patch",
    "apply_patch_call", "apply_patch_call_output", "approval", "approvalId", "approved", "args", "args_delta",
    "arguments", "assistant", "block", "blockReason", "builtin_tools", "call", "call_id", "candidates",
    "choices", "chunk", "citation", "citations", "citations_delta", "client", "clientContent", "code",
    "codeExecution", "codeExecutionResult", "code_interpreter_call", "compaction", "compaction_trigger",
    "completed", "computer", "computer_call", "computer_call_output", "computer_screenshot",
    "computer_use_preview", "config", "configuration_update", "constructor", "content", "content_block",
    "content_block_delta", "content_block_start", "content_block_stop", "content_delta", "created", "custom",
    "custom_tool_call", "custom_tool_call_output", "data", "delta", "description", "developer", "dynamic",
    "end", "end_turn", "enum", "error", "errorText", "event_kind", "executableCode", "executable_code",
    "execution", "exit", "exit_code", "failed", "file", "fileData", "file_search_call", "final_result",
    "finish", "finishMessage", "finishReason", "finish_message", "finish_reason", "function", "functionCall",
    "functionCalls", "functionDeclarations", "functionResponse", "functionResponses", "function_call",
    "function_call_output", "function_calls", "function_declarations", "function_response", "function_tools",
    "gemini", "generic", "goAway", "go_away", "human", "id", "image_generation_call", "in_progress", "index",
    "inlineData", "input", "inputEncoding", "inputTextDelta", "input_json_delta", "input_text",
    "invalid_tool_calls", "isError", "is_error", "item", "item_id", "item_reference", "jsonrpc", "kind",
    "kwargs", "langchain", "lc", "local_shell", "local_shell_call", "local_shell_call_output", "logprobs",
    "mcp", "mcp_approval_request", "mcp_approval_response", "mcp_call", "mcp_list_tools", "mcp_tool_use",
    "mediaResolution", "message", "messageId", "messageMetadata", "message_delta", "message_start",
    "message_stop", "messages", "method", "missing", "model", "modelTurn", "model_turn", "moderation", "name",
    "namespace", "next_part_kind", "obfuscation", "object", "openai", "operation", "outcome", "output",
    "output_index", "output_tools", "params", "part", "partMetadata", "part_delta", "part_delta_kind",
    "part_end", "part_kind", "part_start", "partialArgs", "partial_json", "parts", "ping", "preliminary",
    "program", "program_output", "promptFeedback", "provider", "providerExecuted", "providerMetadata",
    "rawInput", "reasoning", "refusal", "remove", "request", "response", "result", "role", "sequence_number",
    "serverContent", "server_content", "server_tool_call", "server_tool_use", "service_tier", "setup",
    "setupComplete", "setup_complete", "shell", "shell_call", "shell_call_output", "signature",
    "signature_delta", "speech", "start", "state", "status", "stderr", "stdout", "stepNumber", "steps",
    "stop", "stop_reason", "string", "system", "system_fingerprint", "text", "textDelta", "text_delta",
    "thinking", "thinking_delta", "thought", "thoughtSignature", "title", "tool", "toolCall",
    "toolCallCancellation", "toolCallId", "toolCalls", "toolMetadata", "toolName", "toolResponse",
    "toolResults", "toolType", "tool_call", "tool_call_cancellation", "tool_call_chunks", "tool_call_id",
    "tool_calls", "tool_name", "tool_name_delta", "tool_result", "tool_search", "tool_search_call",
    "tool_search_output", "tool_type", "tool_use", "tool_use_id", "tools", "turnComplete", "turns", "type",
    "unified", "usage", "user", "value", "videoMetadata", "web_search_call", "willContinue",
];

/// Longest folded key that can equal a member: the folded form is never longer than this.
const MAX_MEMBER: usize = 32;

struct Table {
    /// Folded member → the member.
    folded: AHashMap<String, &'static str>,
    /// Folded forms of the members that hold an upper-case letter (`functioncall`): the only
    /// members an all-lower-case key can be a variant of.
    lowered: AHashSet<String>,
}

/// One bit of a 1024-bit filter for a lower-case ASCII key (length, first, middle and last byte).
const fn filter_bit(k: &[u8]) -> (usize, u64) {
    let n = k.len();
    let (first, mid, last) = (k[0].to_ascii_lowercase() as usize, k[n / 2].to_ascii_lowercase() as usize, k[n - 1].to_ascii_lowercase() as usize);
    let h = (n.wrapping_mul(31) ^ first.wrapping_mul(7) ^ mid.wrapping_mul(59) ^ last.wrapping_mul(131)) & 1023;
    (h >> 6, 1u64 << (h & 63))
}

/// The filter over the lowered camelCase members, built at compile time: a lower-case key
/// (nearly every key) is looked up only when it might be one of them.
const LOWERED_FILTER: [u64; 16] = {
    let mut f = [0u64; 16];
    let mut i = 0;
    while i < MEMBERS.len() {
        let m = MEMBERS[i].as_bytes();
        let mut upper = false;
        let mut j = 0;
        while j < m.len() {
            upper |= m[j].is_ascii_uppercase();
            j += 1;
        }
        if upper {
            let (w, bit) = filter_bit(m);
            f[w] |= bit;
        }
        i += 1;
    }
    f
};

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = Table { folded: AHashMap::with_capacity(MEMBERS.len()), lowered: AHashSet::new() };
        for m in MEMBERS {
            let f = m.to_ascii_lowercase();
            if f != *m {
                t.lowered.insert(f.clone());
            }
            t.folded.insert(f, m);
        }
        t
    })
}

/// What the parser learns of one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyCase {
    /// ASCII without an upper-case letter, and not a member spelled otherwise: the common key.
    Plain,
    /// Holds an upper-case or a non-ASCII letter (it may twin another key of its object).
    Cased,
    /// Equal under case folding to a member of [`MEMBERS`], but not that member.
    Variant,
}

/// Classifies `key` without allocating: one byte scan for the common all-lower-case key, a set
/// lookup only when a filter says it may be a lowered camelCase member.
#[inline]
pub fn classify(key: &str) -> KeyCase {
    let b = key.as_bytes();
    if plain(b) {
        if b.is_empty() || b.len() > MAX_MEMBER {
            return KeyCase::Plain;
        }
        let (w, bit) = filter_bit(b);
        if LOWERED_FILTER[w] & bit != 0 && table().lowered.contains(key) {
            return KeyCase::Variant;
        }
        return KeyCase::Plain;
    }
    match variant_of(key) {
        Some(_) => KeyCase::Variant,
        None => KeyCase::Cased,
    }
}

/// ASCII without an upper-case letter, eight bytes at a time.
#[inline]
fn plain(b: &[u8]) -> bool {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // for bytes below 0x80: adding 0x3f sets the high bit from `A` up, adding 0x25 from `[` up
    let upper_or_high = |x: u64| x & HIGH != 0 || x.wrapping_add(0x3f3f_3f3f_3f3f_3f3f) & !x.wrapping_add(0x2525_2525_2525_2525) & HIGH != 0;
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        if upper_or_high(u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])) {
            return false;
        }
    }
    let rest = chunks.remainder();
    let mut word = [0u8; 8];
    word[..rest.len()].copy_from_slice(rest);
    !upper_or_high(u64::from_le_bytes(word))
}

/// The member `key` is a variant of (equal under case folding, spelled otherwise), if any.
pub fn variant_of(key: &str) -> Option<&'static str> {
    let mut buf = [0u8; MAX_MEMBER];
    let mut len = 0;
    for c in key.chars() {
        // simple folding as `json::hazards` does it: upper then lower (`ſ` → `s`, `K` → `k`)
        for u in c.to_uppercase() {
            for l in u.to_lowercase() {
                // members are ASCII: a key folding to anything else is none of them
                if !l.is_ascii() || len == MAX_MEMBER {
                    return None;
                }
                buf[len] = l as u8;
                len += 1;
            }
        }
    }
    let folded = std::str::from_utf8(&buf[..len]).ok()?;
    table().folded.get(folded).copied().filter(|m| *m != key)
}

/// Values whose members are data, not envelope: hosts hold them as maps, never bind them to
/// fields, so a key there may be spelled any way. `parent` is the object holding `key`,
/// `parent_key` the member naming that object.
fn opaque(parent_key: Option<&str>, parent: &Map<String, Value>, key: &str) -> bool {
    let kind = parent.get("type").and_then(Value::as_str);
    match key {
        // MCP results and metadata
        "structuredContent" | "_meta" => true,
        // Gemini: the tool's answer
        "response" => matches!(parent_key, Some("functionResponse" | "function_response")),
        // AI SDK tool results (model messages, UI parts)
        "output" | "result" => {
            matches!(kind, Some("tool-result" | "tool-error")) || parent.get("state").and_then(Value::as_str).is_some_and(|s| s.starts_with("output-"))
        }
        // Pydantic AI tool returns
        "content" => matches!(parent.get("part_kind").and_then(Value::as_str), Some("tool-return" | "builtin-tool-return")),
        // the input of a tool the provider ran itself
        "input" => matches!(kind, Some("server_tool_use" | "mcp_tool_use")),
        // LangChain: a tool message's artifact (what the tool returned beside its content, often
        // a service's own record: `{"Id": …, "Status": …}`), as a message dict, stored
        // (`{ type, data }`) or serialized (`kwargs` of a `ToolMessage` constructor)
        "artifact" => kind == Some("tool") || matches!(parent_key, Some("kwargs" | "data")),
        _ => false,
    }
}

/// The first key of `value` (depth first, in key order) that is a variant of a member, or the
/// first object holding two keys equal under folding: its path and what is wrong, for an
/// `E_PAYLOAD` message naming both spellings. Subtrees at a path `skip` accepts (the calls'
/// argument values) are not entered. Iterative: no recursion on untrusted depth.
pub fn find(value: &Value, skip: &dyn Fn(&[Seg]) -> bool) -> Option<(Vec<Seg>, String)> {
    let mut stack: Vec<(&Value, Vec<Seg>)> = vec![(value, Vec::new())];
    while let Some((v, path)) = stack.pop() {
        match v {
            Value::Object(m) => {
                if let Some((a, b)) = case_twins(m) {
                    return Some((path, format!("the keys {} and {} differ only by letter case: {READERS}", quote(a), quote(b))));
                }
                for k in m.keys() {
                    if let Some(member) = variant_of(k) {
                        let mut p = path;
                        p.push(Seg::Key(k.clone()));
                        return Some((p, format!("the key {} is the member `{member}` spelled with other letter case: {READERS}", quote(k))));
                    }
                }
                let parent_key = match path.last() {
                    Some(Seg::Key(k)) => Some(k.as_str()),
                    _ => None,
                };
                for (k, x) in m.iter().rev() {
                    if !matches!(x, Value::Object(_) | Value::Array(_)) || opaque(parent_key, m, k) {
                        continue;
                    }
                    let mut p = path.clone();
                    p.push(Seg::Key(k.clone()));
                    if !skip(&p) {
                        stack.push((x, p));
                    }
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate().rev() {
                    if !matches!(x, Value::Object(_) | Value::Array(_)) {
                        continue;
                    }
                    let mut p = path.clone();
                    p.push(Seg::Index(i));
                    if !skip(&p) {
                        stack.push((x, p));
                    }
                }
            }
            _ => {}
        }
    }
    None
}

const READERS: &str =
    "clients that match member names without regard to case (Go's encoding/json, .NET) may read a member the gate does not, so the payload is refused";

fn quote(s: &str) -> String {
    let q = serde_json::to_string(s).unwrap_or_default();
    if q.chars().count() <= 64 {
        return q;
    }
    let mut cut: String = q.chars().take(60).collect();
    cut.push_str("…\"");
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_classified() {
        for k in ["tool_calls", "functionCall", "toolCallId", "x", "", "query", "content"] {
            assert_ne!(classify(k), KeyCase::Variant, "{k}");
        }
        for k in ["Tool_Calls", "TOOL_CALLS", "Content", "functioncall", "FunctionCall", "toolcallid", "\u{212A}ind", "\u{17F}teps", "Item", "Output"] {
            assert_eq!(classify(k), KeyCase::Variant, "{k}");
        }
        assert_eq!(classify("Path"), KeyCase::Cased);
        assert_eq!(classify("caf\u{e9}"), KeyCase::Cased);
        assert_eq!(variant_of("Tool_Calls"), Some("tool_calls"));
        assert_eq!(variant_of("tool_calls"), None);
        for k in ["", "a", "@[`{", "abcdefgh", "abcdefghZ", "Zbcdefghi", "abcdefgh\u{e9}", "az09_-.~\u{7f}"] {
            assert_eq!(plain(k.as_bytes()), k.bytes().all(|c| c < 0x80 && !c.is_ascii_uppercase()), "{k:?}");
        }
        for c in 0u8..0x80 {
            for at in 0..10 {
                let mut k = vec![b'x'; 10];
                k[at] = c;
                assert_eq!(plain(&k), !c.is_ascii_uppercase(), "{c} at {at}");
            }
        }
    }

    #[test]
    fn members_are_ascii_and_distinct_under_folding() {
        let mut seen = AHashSet::new();
        for m in MEMBERS {
            assert!(m.is_ascii() && m.len() <= MAX_MEMBER, "{m}");
            assert!(seen.insert(m.to_ascii_lowercase()), "two members fold alike: {m}");
        }
    }

    /// Every identifier-like string literal of the codec and stream sources (outside their
    /// tests) is in [`MEMBERS`]: a codec reading a new member cannot be forgotten here.
    #[test]
    fn members_cover_every_codec_literal() {
        let sources = [
            include_str!("ai_sdk.rs"),
            include_str!("ai_sdk_ui.rs"),
            include_str!("anthropic.rs"),
            include_str!("detect.rs"),
            include_str!("gemini.rs"),
            include_str!("gemini_live.rs"),
            include_str!("langchain.rs"),
            include_str!("langchain_raw.rs"),
            include_str!("mcp.rs"),
            include_str!("mod.rs"),
            include_str!("openai.rs"),
            include_str!("openai_responses.rs"),
            include_str!("openai_responses_answer.rs"),
            include_str!("pydantic_ai.rs"),
            include_str!("shape.rs"),
            include_str!("../stream/ai_sdk.rs"),
            include_str!("../stream/ai_sdk_ui.rs"),
            include_str!("../stream/anthropic.rs"),
            include_str!("../stream/buffer.rs"),
            include_str!("../stream/event.rs"),
            include_str!("../stream/gemini.rs"),
            include_str!("../stream/mod.rs"),
            include_str!("../stream/openai.rs"),
            include_str!("../stream/openai_responses.rs"),
            include_str!("../stream/pydantic_ai.rs"),
        ];
        let members: AHashSet<&str> = MEMBERS.iter().copied().collect();
        let mut missing = Vec::new();
        for src in sources {
            let code = src.split("#[cfg(test)]").next().unwrap_or(src);
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for (i, lit) in line.split('"').enumerate() {
                    let ident = lit.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
                        && lit.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                        && !lit.ends_with('_');
                    if i % 2 == 1 && ident && !members.contains(lit) {
                        missing.push(lit.to_owned());
                    }
                }
            }
        }
        missing.sort();
        missing.dedup();
        assert!(missing.is_empty(), "add to MEMBERS: {missing:?}");
    }

    #[test]
    fn find_names_the_key_and_skips_arguments() {
        let v = json!({"choices":[{"message":{"role":"assistant","Tool_Calls":[]}}]});
        let (path, text) = find(&v, &|_| false).unwrap();
        assert_eq!(crate::json::pointer::to_display(&path), "choices[0].message.Tool_Calls");
        assert!(text.contains("\"Tool_Calls\"") && text.contains("`tool_calls`"), "{text}");
        let v = json!({"tool_calls":[],"TOOL_CALLS":[]});
        assert!(find(&v, &|_| false).unwrap().1.contains("\"tool_calls\" and \"TOOL_CALLS\""));
        let args = json!({"content":[{"type":"tool_use","input":{"Name":1,"name":2,"Content":3}}]});
        let slot = [Seg::Key("content".into()), Seg::Index(0), Seg::Key("input".into())];
        assert!(find(&args, &|p| p == slot).is_none());
        assert!(find(&args, &|_| false).is_some());
        let data = json!({"contents":[{"parts":[{"functionResponse":{"name":"f","response":{"Name":"Bob","Content":"x"}}}]}]});
        assert!(find(&data, &|_| false).is_none());
        // a LangChain tool message's artifact is the tool's data, as a dict or serialized; the
        // same key anywhere else is envelope
        let artifact = json!([{"type":"tool","tool_call_id":"c0","content":"x","artifact":{"Status":"ok","Type":"a"}}]);
        assert!(find(&artifact, &|_| false).is_none());
        let serialized =
            json!([{"lc":1,"type":"constructor","id":["langchain_core","messages","ToolMessage"],"kwargs":{"content":"x","artifact":{"Name":"n"}}}]);
        assert!(find(&serialized, &|_| false).is_none());
        let elsewhere = json!([{"type":"ai","content":"","artifact":{"Tool_Calls":[]}}]);
        assert!(find(&elsewhere, &|_| false).is_some());
    }
}
