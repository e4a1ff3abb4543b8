//! Runs every fixture under `__test__/fixtures/dialects/` (shared with vitest) through
//! `Gate::guard`, and checks the re-serialization oracle: the calls found in a payload equal
//! the calls found after the payload is serialized and parsed again.

use std::fs;
use std::path::PathBuf;

use serde_json::Value;
use toolgate_core::{DialectChoice, Gate, TurnOptions};

#[path = "common/fixtures.rs"]
mod fixtures;

use fixtures::{load, mask};

fn root() -> PathBuf {
    fixtures::fixtures_root().join("dialects")
}

fn fixtures() -> Vec<(String, Value)> {
    load("dialects")
}

fn gate() -> Gate {
    Gate::from_json(&fs::read_to_string(root().join("tools.json")).unwrap()).unwrap()
}

fn payload_text(fx: &Value) -> String {
    match fx.get("payloadText") {
        Some(Value::String(s)) => s.clone(),
        _ => serde_json::to_string(&fx["payload"]).unwrap(),
    }
}

fn options(fx: &Value) -> TurnOptions {
    TurnOptions { protocol_version: fx.pointer("/options/protocolVersion").and_then(Value::as_str).map(str::to_owned) }
}

fn check_fixture(name: &str, fx: &Value, gate: &Gate) -> Result<(), String> {
    let choice: DialectChoice = fx["dialect"].as_str().unwrap().parse().map_err(|e| format!("{e}"))?;
    let result = gate.guard(choice, &payload_text(fx), &options(fx));
    if let Some(err) = fx.get("error") {
        let e = match result {
            Ok(r) => return Err(format!("expected {err}, got a report with {} calls", r.calls.len())),
            Err(e) => e,
        };
        if e.code() != err["code"].as_str().unwrap() {
            return Err(format!("expected code {}, got {} ({e})", err["code"], e.code()));
        }
        let contains = err["contains"].as_str().unwrap_or("");
        if !e.to_string().contains(contains) {
            return Err(format!("error message {:?} does not contain {contains:?}", e.to_string()));
        }
        return Ok(());
    }
    let report = result.map_err(|e| format!("unexpected error {}: {e}", e.code()))?;
    let wire: Value = serde_json::from_str(&toolgate_wire::report(&report)).unwrap();
    let expect = &fx["expect"];
    if let Some(d) = expect.get("dialect") {
        if wire["dialect"] != *d {
            return Err(format!("dialect {} != {d}", wire["dialect"]));
        }
    }
    let calls = wire["calls"].as_array().unwrap();
    let want = expect["calls"].as_array().ok_or("expect.calls missing")?;
    if calls.len() != want.len() {
        return Err(format!("{} calls, expected {}: {}", calls.len(), want.len(), wire["calls"]));
    }
    for (got, want) in calls.iter().zip(want) {
        for k in ["callId", "tool", "outcome", "reason"] {
            if let Some(w) = want.get(k) {
                if got.get(k) != Some(w) {
                    return Err(format!("call {}: {k} {:?} != {w} ({})", want["callId"], got.get(k), got.get("message").unwrap_or(&Value::Null)));
                }
            }
        }
        if let Some(w) = want.get("arguments") {
            let args: Value = got.get("argumentsJson").and_then(Value::as_str).map(|s| serde_json::from_str(s).unwrap()).unwrap_or(Value::Null);
            if args != *w {
                return Err(format!("call {}: arguments {args} != {w}", want["callId"]));
            }
        }
    }
    if let Some(w) = expect.get("providerExecuted") {
        if wire["providerExecuted"] != *w {
            return Err(format!("providerExecuted {} != {w}", wire["providerExecuted"]));
        }
    }
    if let Some(w) = expect.get("payload") {
        let got = report.payload.clone().unwrap_or_else(|| serde_json::from_str(&payload_text(fx)).unwrap());
        if got != *w {
            return Err(format!("payload {got} != {w}"));
        }
    }
    let turn_messages = report.turn_refusals.iter().map(|t| t.message.clone());
    let messages: Vec<String> = report.calls.iter().filter_map(|c| c.verdict.message.clone()).chain(turn_messages).collect();
    let mut turn = wire.get("turnRefusals").cloned().unwrap_or(Value::Array(Vec::new()));
    mask(&mut turn, &messages);
    let want_turn = expect.get("turnRefusals").cloned().unwrap_or(Value::Array(Vec::new()));
    if turn != want_turn {
        return Err(format!("turnRefusals {turn} != {want_turn}"));
    }
    if let Some(w) = expect.get("feedback") {
        let mut got = Value::Array(report.feedback.clone());
        mask(&mut got, &messages);
        if got != *w {
            return Err(format!("feedback {got} != {w}"));
        }
    }
    // oracle: the same calls after a serialize/parse round trip
    let again = serde_json::to_string(&serde_json::from_str::<Value>(&payload_text(fx)).unwrap()).unwrap();
    if fx.get("payloadText").is_none() {
        let second = gate.guard(choice, &again, &options(fx)).map_err(|e| format!("round trip: {e}"))?;
        if second.calls != report.calls {
            return Err(format!("{name}: calls differ after a round trip"));
        }
    }
    Ok(())
}

#[test]
fn every_dialect_fixture_holds() {
    let gate = gate();
    let all = fixtures();
    assert!(all.len() >= 10, "fixtures missing");
    let failures: Vec<String> = all.iter().filter_map(|(name, fx)| check_fixture(name, fx, &gate).err().map(|e| format!("{name}: {e}"))).collect();
    assert!(failures.is_empty(), "{} of {} fixtures failed:\n{}", failures.len(), all.len(), failures.join("\n"));
}
