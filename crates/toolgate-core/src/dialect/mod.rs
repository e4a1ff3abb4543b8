//! Dialect codecs: how each framework spells a model turn's tool calls, how it wants a refusal
//! fed back to the model, and how it lists tools. One small codec per dialect, all behind
//! [`Codec`]; the gate's turn pipeline (`turn.rs`) is written once against that trait.

mod ai_sdk;
mod ai_sdk_ui;
mod anthropic;
mod detect;
pub(crate) mod gemini;
mod langchain;
mod mcp;
pub(crate) mod members;
mod openai;
pub(crate) mod openai_responses;
mod pydantic_ai;
pub mod shape;
pub mod sieve;

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

use crate::error::GateError;
use crate::json::pointer::Seg;
use crate::verdict::Verdict;

pub use detect::detect;
use sieve::Sieve;

/// The wire dialects toolgate speaks (`Dialect` in docs/api.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// OpenAI Chat Completions.
    OpenAi,
    /// OpenAI Responses API.
    OpenAiResponses,
    /// Anthropic Messages API.
    Anthropic,
    /// LangChain.js `AIMessage` / `ToolMessage`.
    LangChain,
    /// Pydantic AI `ModelResponse` / `RetryPromptPart`.
    PydanticAi,
    /// Model Context Protocol JSON-RPC `tools/call`.
    Mcp,
    /// Vercel AI SDK parts and `ModelMessage`s (results, steps, provider level).
    AiSdk,
    /// Google Gemini `generateContent`.
    Gemini,
    /// Vercel AI SDK UI messages (`UIMessage` from `useChat`) and the UI message stream.
    AiSdkUi,
}

impl Dialect {
    /// Every dialect, in the order `auto` tries them.
    pub const ALL: [Dialect; 9] = [
        Dialect::Mcp,
        Dialect::OpenAi,
        Dialect::OpenAiResponses,
        Dialect::Anthropic,
        Dialect::Gemini,
        Dialect::PydanticAi,
        Dialect::LangChain,
        Dialect::AiSdk,
        Dialect::AiSdkUi,
    ];

    /// The stable wire name (`"openai"`, `"openai-responses"` …).
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::OpenAi => "openai",
            Dialect::OpenAiResponses => "openai-responses",
            Dialect::Anthropic => "anthropic",
            Dialect::LangChain => "langchain",
            Dialect::PydanticAi => "pydantic-ai",
            Dialect::Mcp => "mcp",
            Dialect::AiSdk => "ai-sdk",
            Dialect::Gemini => "gemini",
            Dialect::AiSdkUi => "ai-sdk-ui",
        }
    }

    /// This dialect's codec.
    pub fn codec(self) -> &'static dyn Codec {
        match self {
            Dialect::OpenAi => &openai::OpenAi,
            Dialect::OpenAiResponses => &openai_responses::OpenAiResponses,
            Dialect::Anthropic => &anthropic::Anthropic,
            Dialect::LangChain => &langchain::LangChain,
            Dialect::PydanticAi => &pydantic_ai::PydanticAi,
            Dialect::Mcp => &mcp::Mcp,
            Dialect::AiSdk => &ai_sdk::AiSdk,
            Dialect::Gemini => &gemini::Gemini,
            Dialect::AiSdkUi => &ai_sdk_ui::AiSdkUi,
        }
    }
}

/// The wire names, in the order `auto` tries them: a JSON Schema string enum (the generated
/// TypeScript `Dialect`, scripts/gen-config.mjs).
impl schemars::JsonSchema for Dialect {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Dialect".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = Dialect::ALL.iter().map(|d| d.as_str()).collect();
        schemars::json_schema!({ "type": "string", "enum": names, "description": "The wire dialects toolgate speaks (docs/turns.md \"Whole turns\")." })
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Dialect {
    type Err = GateError;
    /// Parses a wire name; anything else is `E_DIALECT` listing the names.
    fn from_str(s: &str) -> Result<Dialect, GateError> {
        Dialect::ALL.into_iter().find(|d| d.as_str() == s).ok_or_else(|| {
            let names: Vec<&str> = Dialect::ALL.iter().map(|d| d.as_str()).collect();
            let shown: String = s.chars().take(40).collect();
            GateError::Dialect(format!("unknown dialect {shown:?}; expected one of {} or \"auto\"", names.join(", ")))
        })
    }
}

/// How a call's arguments appear in the payload.
#[derive(Debug, Clone, PartialEq)]
pub enum Args {
    /// A JSON string holding the arguments (OpenAI `function.arguments`); parsed strictly.
    Text(String),
    /// A JSON value in place (Anthropic `input`, Gemini `args` …); `null` means `{}`.
    Value(Value),
    /// No arguments member at all: `{}`.
    Missing,
}

/// One tool call found in a turn, with where its arguments live so repairs can be written back.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The wire id as a string; `"{index}"` where the payload has none.
    pub call_id: String,
    /// The id exactly as on the wire (MCP keeps number ids numbers); `None` where there is none.
    pub wire_id: Option<Value>,
    /// The tool the model asked for.
    pub tool: String,
    /// The arguments as sent.
    pub args: Args,
    /// Path from the payload root to the arguments member (written back on repair).
    pub slot: Vec<Seg>,
    /// Set when the call's own envelope is malformed in a way its protocol answers per call
    /// (MCP: `params` without a string `name` → JSON-RPC `-32602`): the call is refused
    /// `bad_arguments` with this text, and the codec's feedback answers it in that form.
    pub malformed: Option<String>,
}

/// A tool the provider ran itself (Anthropic `server_tool_use`, Responses `web_search_call`,
/// AI SDK `providerExecuted`): not a call to gate, but reported so the host sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderCall {
    /// The wire id, or `"{index}"`.
    pub call_id: String,
    /// The tool name, or the item type where the wire has no name.
    pub tool: String,
    /// The wire type of the item (`server_tool_use`, `web_search_call` …).
    pub kind: String,
}

/// What a codec found in one turn, in payload order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Found {
    /// Calls to gate.
    pub calls: Vec<Call>,
    /// Calls the provider executed itself.
    pub provider_executed: Vec<ProviderCall>,
}

/// A refusal of a turn as a whole, not of one call: the model tried to call a tool but no call
/// can be read from what it sent (Gemini `finishReason: "MALFORMED_FUNCTION_CALL"`). Nothing
/// runs; the host sends the codec's feedback back so the model can try again, instead of
/// reading an empty, silent turn.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TurnRefusal {
    /// What the wire said, as sent (`"MALFORMED_FUNCTION_CALL"`, `"UNEXPECTED_TOOL_CALL"`).
    pub kind: String,
    /// Where in the payload (`candidates[0]`).
    pub at: String,
    /// Model-readable: what went wrong and what to send instead.
    pub message: String,
}

/// A refused call and what to tell the model.
#[derive(Debug, Clone, Copy)]
pub struct Refusal<'a> {
    /// The call as found.
    pub call: &'a Call,
    /// The refusal (its `message` is what the model reads).
    pub verdict: &'a Verdict,
}

/// Options a turn may need beyond its payload.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnOptions {
    /// MCP: the negotiated protocol version (batches exist only in `2025-03-26`).
    pub protocol_version: Option<String>,
}

/// One dialect's codec. Implementations hold no state; every method is total over untrusted
/// input: a broken shape is `E_PAYLOAD` naming the dialect and the JSON path, never a panic and
/// never a silently empty list.
pub trait Codec: Sync {
    /// Which dialect this is.
    fn dialect(&self) -> Dialect;

    /// Whether `payload` has this dialect's shape (used by `auto`; cheap, no full read).
    fn recognizes(&self, payload: &Value) -> bool;

    /// Reads the calls of a turn, in payload order. A text-only turn is `Ok` with no calls.
    fn read(&self, payload: &Value, opts: &TurnOptions) -> Result<Found, GateError>;

    /// Writes refused calls back to the model the way this dialect feeds a tool error, grouped as
    /// the API requires, so the host answers each refused call id exactly once.
    fn feedback(&self, payload: &Value, refused: &[Refusal<'_>]) -> Vec<Value>;

    /// Refusals of the turn as a whole found in `payload` (already read by [`Codec::read`]);
    /// none for dialects whose turns cannot fail that way.
    fn turn_refusals(&self, _payload: &Value) -> Vec<TurnRefusal> {
        Vec::new()
    }

    /// Adds the answers for `refusals` to `feedback` (the answers for refused calls, already
    /// built), grouped as the API requires. Only called with refusals this codec reported.
    fn turn_feedback(&self, _refusals: &[TurnRefusal], _feedback: &mut Vec<Value>) {}

    /// Keeps, in place, only the tool definitions whose name the sieve accepts, removing the
    /// others through it (so each removal is also known by its position in the list sent);
    /// `tools` is this dialect's request shape (array, record, or wrapper). Unknown shapes are
    /// `E_PAYLOAD`.
    fn filter_tools(&self, tools: &mut Value, sieve: &mut Sieve<'_>) -> Result<(), GateError>;
}
