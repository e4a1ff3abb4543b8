//! The oracle shared by the `dialect_<name>` targets: one whole model turn, as untrusted text,
//! through `Gate::guard` in one dialect (and `auto`), `Gate::filter_tools`, and back.
//!
//! The gate is built from `__test__/fixtures/dialects/tools.json` (the config the fixtures, and
//! so the seeds, are written against). Input bytes become text with `String::from_utf8_lossy`.
//!
//! Oracle (a panic = a finding):
//! 1. `guard`, `guard` with `auto` and `filter_tools` never panic.
//! 2. A report is consistent: allowed ⇔ `arguments` ⇔ `arguments_json`, which parses to the
//!    arguments; a refusal has a reason and a non-empty message; feedback is present iff some
//!    call (or the turn) is refused; `payload` is present iff something was written back: every
//!    repaired call is (every codec's argument slot leads somewhere), a refused one never.
//! 3. The input re-serialized (`serde_json::from_str` → `to_string`) and guarded again gives the
//!    same calls (call id, tool, outcome, reason) in the same order.
//! 4. The repaired payload guarded again gives the same calls, each allowed one `passed` with the
//!    same arguments (repairs are written where the codec reads them, and repair is idempotent).
//! 5. `auto`, when it answers this dialect, answers exactly the same report.
//! 6. `filter_tools` output, filtered again, is unchanged; `filter_tools_removals` answers the
//!    same error, or removals that, taken from the input as parsed, leave exactly that output.
//! 7. The list prepared once (`prepare_tools`) fails with the same error, or answers every
//!    caller — on a second gate with a role policy, callers whose answers differ, in alternating
//!    order so remembered runs are found again — exactly what `filter_tools_as` and
//!    `filter_tools_removals` answer for that caller.
//! 8. The engines' two steps with the turn kept in between (`guard_step`, then
//!    `PendingTurn::finish` with answers taken from the input's bytes) answer exactly what the two
//!    passes answer (`guard_as` at `Stage::Ask`, then at `Stage::Answers`), or fail alike, on two
//!    twin gates with the role policy, for each of its callers.
//!
//! Exception to 3 and 4: when the strict parse recorded a duplicate or prototype key, a call
//! refused `bad_arguments` may change outcome — `serde_json` keeps a duplicate's last value and
//! the payload written back keeps the first one and drops prototype keys, so that call's
//! arguments are no longer the text the model sent.

use std::sync::{Arc, OnceLock};

use serde_json::Value;
use toolgate_core::json::parse::parse_payload;
use toolgate_core::{Dialect, DialectChoice, Gate, Outcome, Reason, TurnOptions, TurnReport};

const CONFIG: &str = include_str!("../../../__test__/fixtures/dialects/tools.json");

fn gate() -> &'static Gate {
    static GATE: OnceLock<Gate> = OnceLock::new();
    GATE.get_or_init(|| Gate::from_json(CONFIG).expect("the fixture config compiles"))
}

/// The fixture config with a role policy.
fn policy_config() -> String {
    let mut config: Value = serde_json::from_str(CONFIG).expect("the fixture config parses");
    config["policy"] = serde_json::json!({ "rules": [
        { "id": "a", "effect": "allow", "roles": ["a"], "tools": ["get_weather", "search"] },
        { "id": "b", "effect": "allow", "roles": ["b"], "tools": ["*"] },
        { "id": "no-search-for-c", "effect": "deny", "roles": ["c"], "tools": ["search"] }
    ] });
    config.to_string()
}

/// The fixture config with a role policy, and callers it shows different tools.
fn policy_gate() -> &'static (Gate, Vec<toolgate_core::CallContext>) {
    static GATE: OnceLock<(Gate, Vec<toolgate_core::CallContext>)> = OnceLock::new();
    GATE.get_or_init(|| {
        let gate = Gate::from_json(&policy_config()).expect("the fixture config with a policy compiles");
        let callers = [r#"{"roles":["a"]}"#, r#"{}"#, r#"{"roles":["b"]}"#, r#"{"roles":["b","c"]}"#, r#"{"roles":["a"]}"#, r#"{"roles":["b"]}"#]
            .iter()
            .map(|c| toolgate_core::CallContext::from_json(c).expect("a caller"))
            .collect();
        (gate, callers)
    })
}

/// Two twin gates with the role policy (one for each way of deciding in oracle 8: they see the
/// same inputs, so the same state).
fn engine_gates() -> &'static (Arc<Gate>, Gate) {
    static GATES: OnceLock<(Arc<Gate>, Gate)> = OnceLock::new();
    GATES.get_or_init(|| {
        let text = policy_config();
        (Arc::new(Gate::from_json(&text).expect("compiles")), Gate::from_json(&text).expect("compiles"))
    })
}

/// Oracle 8 for dialect `d` on `text`.
fn engine_steps_as_two_passes(d: Dialect, text: &str, data: &[u8]) {
    use toolgate_core::{EngineAnswer, Stage, TurnStep};
    const WORDS: [EngineAnswer; 4] = [EngineAnswer::Allow, EngineAnswer::Deny, EngineAnswer::Delegate, EngineAnswer::Unasked];
    let (kept, twin) = engine_gates();
    let (_, callers) = policy_gate();
    let opts = TurnOptions::default();
    for (n, c) in callers.iter().enumerate() {
        let answers: Vec<EngineAnswer> = (0..8).map(|i| WORDS[usize::from(data.get(i + n).copied().unwrap_or(0) % 4)]).collect();
        let step = kept.guard_step(DialectChoice::Is(d), text, &opts, Arc::new(c.clone()));
        let first = twin.guard_as(DialectChoice::Is(d), text, &opts, &twin.who(c, Stage::Ask));
        match (step, first) {
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{d}: the first steps fail differently"),
            (Ok(TurnStep::Final(a)), Ok(b)) => {
                assert!(b.calls.iter().all(|c| c.verdict.engine_question.is_none()), "{d}: final at once, yet a call has a question");
                assert_eq!(a, b, "{d}: a turn final at the first step answers otherwise for {c:?}");
            }
            (Ok(TurnStep::Pending(p)), Ok(b)) => {
                let asked: Vec<usize> = p.questions().map(|q| q.index).collect();
                let want: Vec<usize> = b.calls.iter().enumerate().filter(|(_, c)| c.verdict.engine_question.is_some()).map(|(i, _)| i).collect();
                assert_eq!(asked, want, "{d}: the kept turn asks about other calls");
                // a host answers `unasked` for a call it did not ask about
                let answers: Vec<EngineAnswer> = (0..p.len()).map(|i| if asked.contains(&i) { answers[i % answers.len()] } else { EngineAnswer::Unasked }).collect();
                let got = p.finish(&answers);
                let want = twin.guard_as(DialectChoice::Is(d), text, &opts, &twin.who(c, Stage::Answers(&answers)));
                match (got, want) {
                    (Ok(a), Ok(b)) => assert_eq!(a, b, "{d}: the kept turn finishes otherwise than the second pass for {c:?} with {answers:?}"),
                    (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{d}: the second steps fail differently"),
                    (a, b) => panic!("{d}: the kept turn answers {a:?}, the second pass {b:?}"),
                }
            }
            (a, b) => panic!("{d}: guard_step answers {a:?}, guard_as at the ask stage {b:?}"),
        }
    }
}

/// Oracle 7 on `gate` for `callers`.
fn prepared_answers_as_unprepared(d: Dialect, gate: &Gate, text: &str, callers: &[toolgate_core::CallContext]) {
    match gate.prepare_tools(d, text) {
        Err(e) => {
            let want = gate.filter_tools(d, text).expect_err("prepare_tools failed, so must filter_tools");
            assert_eq!(e.to_string(), want.to_string(), "{d}: prepare_tools and filter_tools fail differently");
        }
        Ok(prepared) => {
            for c in callers {
                let who = gate.who(c, toolgate_core::Stage::Full);
                let want = gate.filter_tools_as(d, text, &who);
                let got = gate.filter_prepared(&prepared, &who);
                match (&want, &got) {
                    (Ok(a), Ok(b)) => assert_eq!(a.as_str(), &**b, "{d}: the prepared list answers {c:?} otherwise"),
                    (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{d}: the prepared list fails {c:?} otherwise"),
                    _ => panic!("{d}: filter_tools_as {want:?} but filter_prepared {got:?}"),
                }
                if let (Ok(a), Ok(b)) = (gate.filter_tools_removals(d, text, &who), gate.filter_prepared_removals(&prepared, &who)) {
                    assert_eq!(&a[..], &b[..], "{d}: the prepared list's removals for {c:?} differ");
                }
            }
        }
    }
}

type Key = (String, String, Outcome, Option<Reason>);

fn keys(r: &TurnReport) -> Vec<Key> {
    r.calls.iter().map(|c| (c.call_id.clone(), c.tool.clone(), c.verdict.outcome, c.verdict.reason)).collect()
}

/// Runs the whole oracle for dialect `d` on one input.
pub fn run(d: Dialect, data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let gate = gate();
    let opts = TurnOptions::default();

    let filtered = gate.filter_tools(d, &text);
    let removals = gate.filter_tools_removals(d, &text, &gate.anonymous());
    match (&filtered, removals) {
        (Ok(filtered), Ok(paths)) => {
            let again = gate.filter_tools(d, filtered).expect("a filtered tool list filters again");
            assert_eq!(&again, filtered, "{d}: filter_tools is not idempotent");
            let mut mine: Value = serde_json::from_str(&text).expect("a list filter_tools read parses");
            assert!(toolgate_core::dialect::sieve::remove_paths(&mut mine, &paths), "{d}: removals {paths:?} name something not in the list");
            assert_eq!(&mine.to_string(), filtered, "{d}: the removals {paths:?} do not leave what filter_tools answers");
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{d}: the two filters fail differently"),
        (a, b) => panic!("{d}: filter_tools {a:?} but filter_tools_removals {b:?}"),
    }
    prepared_answers_as_unprepared(d, gate, &text, &[toolgate_core::CallContext::default(), toolgate_core::CallContext::default()]);
    let (policy, callers) = policy_gate();
    prepared_answers_as_unprepared(d, policy, &text, callers);
    engine_steps_as_two_passes(d, &text, data);

    let direct = gate.guard(DialectChoice::Is(d), &text, &opts);
    let auto = gate.guard(DialectChoice::Auto, &text, &opts);
    if let Ok(a) = &auto {
        if a.dialect == d {
            let r = direct.as_ref().expect("auto read this dialect, the dialect itself must too");
            assert_eq!(a, r, "{d}: auto and the explicit dialect answer differently");
        }
    }
    let Ok(report) = direct else { return };
    consistent(d, &report);

    let lossy = parse_payload(&text, gate.limits(), gate.max_payload_bytes()).is_ok_and(|p| !p.problems.is_empty());
    let exempt = |k: &Key| lossy && k.3 == Some(Reason::BadArguments);
    let first = keys(&report);

    if let Ok(value) = serde_json::from_str::<Value>(&text) {
        let again = gate.guard(DialectChoice::Is(d), &value.to_string(), &opts).expect("the re-serialized turn guards again");
        let second = keys(&again);
        assert_eq!(first.len(), second.len(), "{d}: re-serialized turn has other calls");
        for (a, b) in first.iter().zip(&second) {
            assert_eq!((&a.0, &a.1), (&b.0, &b.1), "{d}: re-serialized turn reads other calls");
            if !exempt(a) {
                assert_eq!(a, b, "{d}: re-serialized turn decided differently");
            }
        }
    }

    let Some(payload) = &report.payload else { return };
    let again = gate.guard(DialectChoice::Is(d), &payload.to_string(), &opts).expect("the repaired payload guards again");
    assert_eq!(report.calls.len(), again.calls.len(), "{d}: repaired payload has other calls");
    for (a, b) in report.calls.iter().zip(&again.calls) {
        assert_eq!((&a.call_id, &a.tool), (&b.call_id, &b.tool), "{d}: repaired payload reads other calls");
        let k = (a.call_id.clone(), a.tool.clone(), a.verdict.outcome, a.verdict.reason);
        if a.verdict.allowed() {
            assert_eq!(b.verdict.outcome, Outcome::Passed, "{d}: call {} not passed after repair: {:?}", a.call_id, b.verdict);
            assert_eq!(a.verdict.arguments, b.verdict.arguments, "{d}: call {} arguments changed on the second pass", a.call_id);
        } else if !exempt(&k) {
            assert_eq!((a.verdict.outcome, a.verdict.reason), (b.verdict.outcome, b.verdict.reason), "{d}: refused call {} decided differently", a.call_id);
        }
    }
}

fn consistent(d: Dialect, r: &TurnReport) {
    let mut refused = 0;
    for c in &r.calls {
        let v = &c.verdict;
        assert_eq!(v.allowed(), v.arguments.is_some(), "{d}: allowed without arguments or refused with: {v:?}");
        assert_eq!(v.allowed(), c.arguments_json.is_some(), "{d}: arguments_json disagrees with allowed: {c:?}");
        if let (Some(args), Some(json)) = (&v.arguments, &c.arguments_json) {
            let parsed: Value = serde_json::from_str(json).expect("arguments_json is JSON");
            assert_eq!(&parsed, args, "{d}: arguments_json is not the arguments");
        } else {
            refused += 1;
            assert!(v.reason.is_some(), "{d}: refusal without a reason: {v:?}");
            assert!(v.message.as_deref().is_some_and(|m| !m.is_empty()), "{d}: refusal without a message: {v:?}");
        }
    }
    // a turn refusal (Gemini's MALFORMED_FUNCTION_CALL) is answered in feedback without a call
    assert_eq!(refused > 0 || !r.turn_refusals.is_empty(), !r.feedback.is_empty(), "{d}: feedback present iff some call or the turn is refused");
    // written back: every repaired call, and a passed one whose arguments were normalised
    // (`""` / `null` / missing → `{}`); never a refused one
    assert_eq!(!r.patches.is_empty(), r.payload.is_some(), "{d}: payload present iff something was written back");
    for p in &r.patches {
        assert!(r.calls[p.call].verdict.allowed(), "{d}: a refused call was written back: {p:?}");
    }
    for (i, c) in r.calls.iter().enumerate() {
        if c.verdict.outcome == Outcome::Repaired {
            assert!(r.patches.iter().any(|p| p.call == i), "{d}: repaired call {i} not written back");
        }
    }
}
