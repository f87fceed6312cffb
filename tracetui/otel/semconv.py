"""Attribute names: OpenTelemetry's GenAI and HTTP conventions, the older and OpenInference ones, and tracetui's own.

Written out rather than imported from ``opentelemetry-semantic-conventions`` so
that reading and writing files needs no OpenTelemetry package; the names follow
the GenAI conventions as of semantic-conventions 1.37+ (``gen_ai.provider.name``,
``gen_ai.input.messages`` …).
"""
from __future__ import annotations

# -- GenAI (current) -------------------------------------------------------------------------
OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
SYSTEM = "gen_ai.system"  # the name before gen_ai.provider.name
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION_ID = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_ID = "gen_ai.response.id"
FINISH_REASONS = "gen_ai.response.finish_reasons"
USAGE_INPUT = "gen_ai.usage.input_tokens"
USAGE_OUTPUT = "gen_ai.usage.output_tokens"
USAGE_PROMPT_OLD = "gen_ai.usage.prompt_tokens"
USAGE_COMPLETION_OLD = "gen_ai.usage.completion_tokens"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
TOOL_DEFINITIONS = "gen_ai.tool.definitions"
TOOL_NAME = "gen_ai.tool.name"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_DESCRIPTION = "gen_ai.tool.description"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT = "gen_ai.tool.call.result"
#: the Agent Action Gate (semantic-conventions-genai): what the gate did with a tool call, and the ledger's receipt
TOOL_DISPOSITION = "gen_ai.agent.tool.disposition"  # allow, simulate or deny
RECEIPT_HASH = "gen_ai.agent.action_ledger.receipt_hash"
DISPOSITIONS = ("allow", "simulate", "deny")
#: the older indexed attributes: gen_ai.prompt.0.role, gen_ai.completion.0.tool_calls.0.name …
PROMPT_PREFIX = "gen_ai.prompt."
COMPLETION_PREFIX = "gen_ai.completion."

INVOKE_AGENT, CHAT, EXECUTE_TOOL = "invoke_agent", "chat", "execute_tool"
AGENT_OPERATIONS = frozenset({"invoke_agent", "create_agent", "invoke_workflow"})
CHAT_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})

# -- general ---------------------------------------------------------------------------------
ERROR_TYPE = "error.type"
HTTP_METHOD = "http.request.method"
HTTP_METHOD_OLD = "http.method"
HTTP_STATUS = "http.response.status_code"
HTTP_STATUS_OLD = "http.status_code"
HTTP_RESEND_COUNT = "http.request.resend_count"
URL_FULL = "url.full"
SERVER_ADDRESS = "server.address"
SERVICE_NAME = "service.name"
EXCEPTION_EVENT = "exception"
EXCEPTION_TYPE = "exception.type"
EXCEPTION_MESSAGE = "exception.message"

# -- OpenInference ---------------------------------------------------------------------------
OI_KIND = "openinference.span.kind"
OI_INPUT_MESSAGES = "llm.input_messages."
OI_OUTPUT_MESSAGES = "llm.output_messages."
OI_TOOLS = "llm.tools."
OI_MODEL = "llm.model_name"
OI_FINISH_REASON = "llm.finish_reason"
OI_TOKENS_PROMPT = "llm.token_count.prompt"
OI_TOKENS_COMPLETION = "llm.token_count.completion"
OI_TOOL_NAME = "tool.name"
OI_TOOL_PARAMETERS = "tool.parameters"
OI_TOOL_DESCRIPTION = "tool.description"
OI_TOOL_CALL_ID = "tool_call.id"
OI_INPUT_VALUE = "input.value"
OI_OUTPUT_VALUE = "output.value"
OI_AGENT_NAME = "agent.name"

# -- tracetui's own namespace ------------------------------------------------------------------
TT = "tracetui."
RUN_ID = "tracetui.run.id"
SCENARIO = "tracetui.scenario"
ABLATION = "tracetui.ablation"
PRODUCER = "tracetui.producer"
STATUS = "tracetui.status"
READY = "tracetui.ready"
COMPLETE = "tracetui.complete"
FAILURE_LANE = "tracetui.failure.lane"
FAILURE_SEQ = "tracetui.failure.seq"
FAILURE_CODE = "tracetui.failure.code"
FAILURE_REASON = "tracetui.failure.reason"
FAILURE_DECIDED_AT = "tracetui.failure.decided_at"
METRICS_PREFIX = "tracetui.metrics."
TURN = "tracetui.turn"
# one tracetui event, on a span event (or on an HTTP attempt's own span)
EV_SEQ = "tracetui.seq"
EV_LANE = "tracetui.lane"
EV_KIND = "tracetui.kind"
EV_OUTCOME = "tracetui.outcome"
EV_CODE = "tracetui.code"
EV_SUMMARY = "tracetui.summary"
EV_TURN = "tracetui.turn"
EV_T_MS = "tracetui.t_ms"
EV_CALL_ID = "tracetui.call_id"
EV_BACKOFF_MS = "tracetui.backoff_ms"

SCOPE_NAME = "tracetui"
