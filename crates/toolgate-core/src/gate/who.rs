//! Who asks for a decision, and how far the pipeline runs for them: built once per
//! `check`/`guard`/stream and passed through every step (`authorize.rs` decides with it,
//! `record.rs` records it).

use crate::context::CallContext;

/// What a plugged engine answered for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineAnswer {
    /// Allow, even where no rule allowed (never over a built-in deny).
    Allow,
    /// Deny (`engine`).
    Deny,
    /// Leave the rules' result.
    Delegate,
    /// Not an engine's answer: the host did not ask the engines about this call, because the
    /// first step ([`Stage::Ask`]) refused it before their stage. A call that reaches the engines'
    /// stage with it in the second step (the rules changed in between, e.g. a `now` condition ran
    /// out while the engines answered the turn's other calls) is refused (`engine`): a turn is
    /// never finished with an answer nobody gave.
    Unasked,
}

impl EngineAnswer {
    /// The answer's word on the bindings' wire: `allow`, `deny`, `delegate`, `unasked`.
    pub const fn as_str(self) -> &'static str {
        match self {
            EngineAnswer::Allow => "allow",
            EngineAnswer::Deny => "deny",
            EngineAnswer::Delegate => "delegate",
            EngineAnswer::Unasked => "unasked",
        }
    }
}

impl std::str::FromStr for EngineAnswer {
    type Err = crate::GateError;

    /// Reads [`EngineAnswer::as_str`]'s words; anything else is `E_CONFIG` naming what was sent.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        [EngineAnswer::Allow, EngineAnswer::Deny, EngineAnswer::Delegate, EngineAnswer::Unasked]
            .into_iter()
            .find(|a| a.as_str() == text)
            .ok_or_else(|| crate::GateError::Config(format!("engine answer {text:?}: expected allow, deny, delegate or unasked")))
    }
}

/// How far the pipeline runs. Engines live in the host (TypeScript), so a gate with engines
/// decides in two steps: [`Stage::Ask`] stops where the engines must be asked (no state is read
/// or written), then [`Stage::Answers`] runs the whole pipeline with their answers.
#[derive(Debug, Clone, Copy)]
pub enum Stage<'a> {
    /// No engines: the whole pipeline.
    Full,
    /// Stop at the engine stage: a call the built-ins do not refuse comes back allowed with
    /// `engine_question` set, and nothing is recorded.
    Ask,
    /// The engines' answers, by call index (`check`: one). A missing answer denies (`engine`).
    Answers(&'a [EngineAnswer]),
}

/// Who is calling, and how far to run: built once per `check`/`guard`/stream.
#[derive(Debug, Clone, Copy)]
pub struct Who<'a> {
    /// The host's context.
    pub ctx: &'a CallContext,
    /// The caller's persona (index into the policy's personas).
    pub persona: Option<usize>,
    /// The time of this decision (ms since the Unix epoch).
    pub now_ms: u64,
    /// How far to run.
    pub stage: Stage<'a>,
    /// Index of the call within its turn (selects the engine answer).
    pub index: usize,
    /// Set by `confirm`: the confirmation step is being taken, not asked for.
    pub confirming: bool,
}

impl<'a> Who<'a> {
    /// The same caller deciding call `index` of a turn.
    pub fn at(&self, index: usize) -> Who<'a> {
        Who { index, ..*self }
    }
}
