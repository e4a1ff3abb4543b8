//! The engines' second step kept in Rust — a turn (`Gate::guard_step` → `PendingTurn::finish`)
//! and one call (`Gate::check_step` → `PendingCall::finish`) — against the two passes each
//! replaces (`guard_as` / `check_as` at `Stage::Ask`, then at `Stage::Answers`): the same answers
//! for every engine answer, the arguments the engines were shown are the ones decided, state and
//! time are read at the second step, and a refusal before the engines' stage stays one.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use toolgate_core::time::Clock;
use toolgate_core::{
    CallContext, CallStep, Dialect, DialectChoice, EngineAnswer, Gate, Outcome, Reason, RulesAnswer, Stage, TurnOptions, TurnReport, TurnStep, Verdict,
};

fn config() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../__test__/fixtures/policy/config.json")).unwrap()
}

fn gate_at(now: &Arc<AtomicU64>, config: &str) -> Arc<Gate> {
    let n = Arc::clone(now);
    Arc::new(Gate::from_json(config).unwrap().with_clock(Clock::from_fn(move || n.load(Ordering::SeqCst))))
}

fn ctx(json: &str) -> Arc<CallContext> {
    Arc::new(CallContext::from_json(json).unwrap())
}

/// An OpenAI Chat Completions turn holding `calls` (name, arguments text).
fn turn(calls: &[(&str, &str)]) -> String {
    let calls: Vec<serde_json::Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| serde_json::json!({ "id": format!("call_{i}"), "type": "function", "function": { "name": name, "arguments": args } }))
        .collect();
    serde_json::json!({ "choices": [{ "index": 0, "message": { "role": "assistant", "content": null, "tool_calls": calls }, "finish_reason": "tool_calls" }] })
        .to_string()
}

const OPENAI: DialectChoice = DialectChoice::Is(Dialect::OpenAi);

/// The report of the two passes on `gate`: stage one, then the answers.
fn two_passes(gate: &Gate, payload: &str, who: &CallContext, answers: &[EngineAnswer]) -> TurnReport {
    let opts = TurnOptions::default();
    gate.guard_as(OPENAI, payload, &opts, &gate.who(who, Stage::Ask)).unwrap();
    gate.guard_as(OPENAI, payload, &opts, &gate.who(who, Stage::Answers(answers))).unwrap()
}

/// `v` with its confirmation token (random) blanked, so two verdicts compare on the rest.
fn untokened_verdict(mut v: Verdict) -> Verdict {
    if let Some(c) = v.confirmation.as_mut() {
        assert_eq!(c.token.len(), 32);
        c.token.clear();
    }
    v
}

/// `report` with each call's confirmation token blanked.
fn untokened(mut report: TurnReport) -> TurnReport {
    for c in &mut report.calls {
        c.verdict = untokened_verdict(std::mem::replace(&mut c.verdict, Verdict::denied(Reason::Engine, String::new())));
    }
    report
}

fn pending(gate: &Arc<Gate>, payload: &str, who: &Arc<CallContext>) -> toolgate_core::PendingTurn {
    match gate.guard_step(OPENAI, payload, &TurnOptions::default(), Arc::clone(who)).unwrap() {
        TurnStep::Pending(p) => p,
        TurnStep::Final(r) => panic!("expected questions for the engines, got a final report: {r:?}"),
    }
}

#[test]
fn every_answer_finishes_the_turn_as_the_two_passes_do() {
    // a repaired call with a rule, a call no rule allows, a broken call, an unknown tool, a
    // call refused by a deny rule: the last three are refused before the engines' stage
    let payload = turn(&[
        ("search", r#"{"q":"x"}"#),
        ("admin_panel", "{}"),
        ("read_file", r#"{"path":"reports/private/a"}"#),
        ("send_emial", r#"{"to":"a"}"#),
        ("transfer", r#"{"amount":"5","to":"ana"}"#),
        ("list_orders", r#"{"owner":"bob","status":"OPEN"}"#),
    ]);
    let bob = ctx(r#"{"subject":"bob","roles":["analyst"]}"#);
    let words = [EngineAnswer::Allow, EngineAnswer::Deny, EngineAnswer::Delegate, EngineAnswer::Unasked];
    let mut compared = 0;
    for n in 0..words.len().pow(4) {
        let pick = |k: u32| words[n / words.len().pow(k) % words.len()];
        // the calls asked: 0, 1, 4 (`transfer`: no rule for an analyst) and 5; the others are
        // answered as a host answers them
        let answers = [pick(0), pick(1), EngineAnswer::Unasked, EngineAnswer::Unasked, pick(2), pick(3)];
        let now = Arc::new(AtomicU64::new(1_800_000_000_000));
        let (one, two) = (gate_at(&now, &config()), gate_at(&now, &config()));
        let kept = pending(&one, &payload, &bob);
        let asked: Vec<usize> = kept.questions().map(|q| q.index).collect();
        assert_eq!(asked, [0, 1, 4, 5]);
        let finished = kept.finish(&answers).unwrap();
        assert_eq!(untokened(finished), untokened(two_passes(&two, &payload, &bob, &answers)), "answers {answers:?}");
        compared += 1;
    }
    assert_eq!(compared, 256);
}

#[test]
fn the_engines_are_shown_the_decided_arguments_and_the_rules_answer() {
    let now = Arc::new(AtomicU64::new(1_800_000_000_000));
    let gate = gate_at(&now, &config());
    let bob = ctx(r#"{"subject":"bob"}"#);
    let payload = turn(&[("list_orders", r#"{"owner":"bob","status":"OPEN"}"#), ("admin_panel", "")]);
    let kept = pending(&gate, &payload, &bob);
    let q: Vec<_> = kept.questions().collect();
    assert_eq!(q.len(), 2);
    assert_eq!((q[0].tool, q[0].call_id, q[0].rules), ("list_orders", "call_0", RulesAnswer::Allow));
    assert_eq!(q[0].arguments, &serde_json::json!({ "owner": "bob", "status": "open" }), "the repaired arguments");
    assert_eq!((q[0].action, q[0].resource), (Some("list_orders"), Some("orders:bob")));
    assert_eq!((q[1].tool, q[1].rules, q[1].arguments), ("admin_panel", RulesAnswer::NoRule, &serde_json::json!({})));
    let report = kept.finish(&[EngineAnswer::Delegate, EngineAnswer::Allow]).unwrap();
    assert_eq!(report.calls[0].verdict.outcome, Outcome::Repaired);
    assert_eq!(report.calls[0].arguments_json.as_deref(), Some(r#"{"owner":"bob","status":"open"}"#));
    assert_eq!(report.calls[1].verdict.outcome, Outcome::Passed, "normalised to {{}}");
    assert_eq!(report.patches.len(), 2, "both calls written back");
    assert!(report.calls.iter().all(|c| c.verdict.engine_question.is_none()));
}

#[test]
fn a_turn_no_call_of_which_reaches_the_engines_is_final_at_the_first_step() {
    let now = Arc::new(AtomicU64::new(1_800_000_000_000));
    let (gate, other) = (gate_at(&now, &config()), gate_at(&now, &config()));
    let mallory = ctx(r#"{"subject":"mallory"}"#);
    let payload = turn(&[("search", r#"{"q":"x"}"#), ("nope", "{}")]);
    let TurnStep::Final(report) = gate.guard_step(OPENAI, &payload, &TurnOptions::default(), Arc::clone(&mallory)).unwrap() else {
        panic!("a turn refused before the engines is final")
    };
    assert_eq!(report, other.guard_as(OPENAI, &payload, &TurnOptions::default(), &other.who(&mallory, Stage::Ask)).unwrap());
    assert_eq!(report.calls[0].verdict.reason, Some(Reason::DenyRule));
    // a broken turn is the same error at the first step
    let e = gate.guard_step(OPENAI, "{\"choices\":", &TurnOptions::default(), mallory).unwrap_err();
    assert_eq!(e.code(), "E_PAYLOAD");
}

#[test]
fn the_second_step_reads_the_rules_and_the_state_as_they_are_then() {
    // the allow rule runs out while the engines answer: a delegated call finds no rule
    let config = r#"{ "version": 1,
        "loop": { "maxIdentical": 1, "windowSeconds": 60 },
        "tools": [ { "name": "close_account", "inputSchema": { "type": "object" } },
                   { "name": "search", "inputSchema": { "type": "object" } } ],
        "policy": { "rules": [
            { "effect": "allow", "tools": ["close_account"], "when": "now < '2027-01-15T08:00:00Z'" },
            { "effect": "allow", "tools": ["search"] } ] } }"#;
    let now = Arc::new(AtomicU64::new(1_800_000_000_000 - 1)); // 2027-01-15T08:00:00Z - 1 ms
    let gate = gate_at(&now, config);
    let ana = ctx(r#"{"subject":"ana"}"#);
    let payload = turn(&[("close_account", "{}"), ("search", r#"{"q":"a"}"#)]);
    let first = pending(&gate, &payload, &ana);
    let second = pending(&gate, &payload, &ana);
    assert_eq!(first.questions().map(|q| q.rules).collect::<Vec<_>>(), [RulesAnswer::Allow, RulesAnswer::Allow]);
    now.fetch_add(2, Ordering::SeqCst);
    let report = first.finish(&[EngineAnswer::Delegate, EngineAnswer::Delegate]).unwrap();
    assert_eq!(report.calls[0].verdict.reason, Some(Reason::NoRule), "the rule ran out before the second step");
    assert_eq!(report.calls[1].verdict.outcome, Outcome::Passed);
    // the loop guard counts at the second step only: the same search, finished again, is one too many
    let report = second.finish(&[EngineAnswer::Allow, EngineAnswer::Allow]).unwrap();
    assert_eq!(report.calls[0].verdict.outcome, Outcome::Passed, "an engine may allow where no rule does");
    assert_eq!(report.calls[1].verdict.reason, Some(Reason::Loop));
}

#[test]
fn a_missing_or_unasked_answer_denies_an_asked_call() {
    let now = Arc::new(AtomicU64::new(1_800_000_000_000));
    let gate = gate_at(&now, &config());
    let bob = ctx(r#"{"subject":"bob"}"#);
    let payload = turn(&[("search", r#"{"q":"x"}"#), ("admin_panel", "{}")]);
    let report = pending(&gate, &payload, &bob).finish(&[EngineAnswer::Unasked]).unwrap();
    assert_eq!([report.calls[0].verdict.reason, report.calls[1].verdict.reason], [Some(Reason::Engine), Some(Reason::Engine)]);
    assert!(report.calls.iter().all(|c| c.arguments_json.is_none()), "nothing runs");
    assert_eq!(report.feedback.len(), 2, "each refused call is answered");
}

#[test]
fn a_pending_turn_is_finished_for_the_caller_it_was_decided_for() {
    // the caller is held by the turn: bob's turn stays bob's, whatever the host holds later
    let now = Arc::new(AtomicU64::new(1_800_000_000_000));
    let gate = gate_at(&now, &config());
    let payload = turn(&[("user_files", r#"{"path":"notes.txt"}"#)]);
    let kept = pending(&gate, &payload, &ctx(r#"{"subject":"bob"}"#));
    assert_eq!(kept.questions().next().unwrap().resource, Some("home:bob/notes.txt"));
    let report = kept.finish(&[EngineAnswer::Delegate]).unwrap();
    assert_eq!(report.calls[0].verdict.resource.as_deref(), Some("home:bob/notes.txt"));
    assert_eq!(report.calls[0].verdict.outcome, Outcome::Passed);
}

// ---- one call (`check`)

#[test]
fn every_call_and_answer_is_decided_as_the_two_passes_decide_it() {
    let calls = [
        ("search", r#"{"q":"x"}"#),
        ("list_orders", r#"{"owner":"bob","status":"OPEN"}"#),
        ("admin_panel", ""),
        ("transfer", r#"{"amount":"5","to":"ana"}"#),
        ("read_file", r#"{"path":"reports/private/a"}"#),
        ("read_file", r#"{"path":"reports/a""#),
        ("send_emial", "{}"),
        ("delete_user", r#"{"id":"u1"}"#),
    ];
    let who = ctx(r#"{"subject":"bob","roles":["analyst"],"callId":"c-9"}"#);
    let mut pending = 0;
    for (tool, args) in calls {
        for answer in [EngineAnswer::Allow, EngineAnswer::Deny, EngineAnswer::Delegate, EngineAnswer::Unasked] {
            let now = Arc::new(AtomicU64::new(1_800_000_000_000));
            let (one, two) = (gate_at(&now, &config()), gate_at(&now, &config()));
            let first = two.check_as(tool, args, &two.who(&who, Stage::Ask));
            let (kept, want) = match one.check_step(tool, args, Arc::clone(&who)) {
                CallStep::Final(v) => {
                    assert!(first.engine_question.is_none(), "{tool}: final at once only when the engines have no question");
                    (v, first)
                }
                CallStep::Pending(p) => {
                    pending += 1;
                    assert_eq!(p.verdict(), &first, "{tool}: the first step's verdict");
                    (p.finish(answer), two.check_as(tool, args, &two.who(&who, Stage::Answers(&[answer]))))
                }
            };
            assert_eq!(untokened_verdict(kept), untokened_verdict(want), "{tool} {args} {answer:?}");
        }
    }
    assert_eq!(pending, 4 * 4, "search, list_orders, admin_panel and transfer reach the engines");
}

#[test]
fn the_second_step_reads_the_rules_and_the_state_then() {
    let config = r#"{ "version": 1,
        "loop": { "maxIdentical": 1, "windowSeconds": 60 },
        "tools": [ { "name": "close_account", "inputSchema": { "type": "object" } } ],
        "policy": { "rules": [ { "effect": "allow", "tools": ["close_account"], "when": "now < '2027-01-15T08:00:00Z'" } ] } }"#;
    let now = Arc::new(AtomicU64::new(1_800_000_000_000 - 1)); // 2027-01-15T08:00:00Z - 1 ms
    let gate = gate_at(&now, config);
    let ana = ctx(r#"{"subject":"ana"}"#);
    let step = |g: &Arc<Gate>| match g.check_step("close_account", "{}", Arc::clone(&ana)) {
        CallStep::Pending(p) => p,
        CallStep::Final(v) => panic!("expected a question for the engines, got {v:?}"),
    };
    let (first, second) = (step(&gate), step(&gate));
    assert_eq!(first.verdict().engine_question, Some(RulesAnswer::Allow));
    assert_eq!(first.verdict().arguments, Some(serde_json::json!({})));
    now.fetch_add(2, Ordering::SeqCst);
    assert_eq!(first.finish(EngineAnswer::Delegate).reason, Some(Reason::NoRule), "the rule ran out before the second step");
    let allowed = second.finish(EngineAnswer::Allow);
    assert_eq!(allowed.outcome, Outcome::Passed, "an engine may allow where no rule does");
    // the loop guard counted that one: the same call again is one too many
    assert_eq!(step(&gate).finish(EngineAnswer::Allow).reason, Some(Reason::Loop));
}

#[test]
fn a_turn_refused_whole_decides_none_of_its_calls_at_either_step() {
    // two calls with one id: refused before any call is decided (found by fuzzing oracle 8: the
    // kept turn put such a turn's calls to the engines and counted them before refusing it)
    let config = r#"{ "version": 1,
        "loop": { "maxIdentical": 1, "windowSeconds": 60 },
        "tools": [ { "name": "search", "inputSchema": { "type": "object" } } ],
        "policy": { "rules": [ { "effect": "allow", "tools": ["search"] } ] } }"#;
    let now = Arc::new(AtomicU64::new(1_800_000_000_000));
    let gate = gate_at(&now, config);
    let ana = ctx(r#"{"subject":"ana"}"#);
    let twice = turn(&[("search", r#"{"q":"a"}"#), ("search", r#"{"q":"a"}"#)]).replace("call_1", "call_0");
    let e = gate.guard_step(OPENAI, &twice, &TurnOptions::default(), Arc::clone(&ana)).unwrap_err();
    assert!(e.to_string().contains("appears twice"), "{e}");
    for stage in [Stage::Full, Stage::Ask] {
        let e = gate.guard_as(OPENAI, &twice, &TurnOptions::default(), &gate.who(&ana, stage)).unwrap_err();
        assert!(e.to_string().contains("appears twice"), "{e}");
    }
    // nothing was counted toward the loop guard: the same call, once, still passes
    let once = turn(&[("search", r#"{"q":"a"}"#)]);
    let r = gate.guard_as(OPENAI, &once, &TurnOptions::default(), &gate.who(&ana, Stage::Full)).unwrap();
    assert_eq!(r.calls[0].verdict.outcome, Outcome::Passed);
}
