"""Chat models: the protocol (`types`), the OpenAI-backed implementations and replay.

Importing this package is cheap: the HTTP client (``httpx2``) is imported on the first call.

* :func:`chat_model` — the model for a role, chosen from the environment (``settings``);
* :class:`OpenAIChatModel` — Azure OpenAI / OpenAI / OpenAI-compatible (``openai_chat``);
* :class:`Endpoint` — where and how to connect (``endpoint``);
* :class:`RetryPolicy` — bounded retries with backoff (``retry``);
* :class:`PriceTable` — cost per call (``pricing``).

Errors: :class:`LLMError` when no answer could be had (after retries);
:class:`LLMConfigError` (a subclass) when the settings are missing or wrong.
"""

from typing import TYPE_CHECKING

from agent_evals.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from agent_evals.llm.endpoint import Endpoint, EndpointKind, Secret
    from agent_evals.llm.openai_chat import OpenAIChatModel
    from agent_evals.llm.pricing import ModelPrice, PriceTable
    from agent_evals.llm.retry import RetryPolicy
    from agent_evals.llm.settings import (
        LLMSettings,
        chat_model,
        describe_llm_settings,
        llm_configured,
        load_settings,
        resolve_model,
    )
    from agent_evals.llm.types import (
        ChatModel,
        ChatResponse,
        LLMConfigError,
        LLMError,
        Message,
        Role,
        ToolCall,
        ToolSpec,
        Usage,
    )

__getattr__ = lazy_exports(__name__, {
    "Endpoint": "endpoint",
    "EndpointKind": "endpoint",
    "Secret": "endpoint",
    "OpenAIChatModel": "openai_chat",
    "ModelPrice": "pricing",
    "PriceTable": "pricing",
    "RetryPolicy": "retry",
    "LLMSettings": "settings",
    "chat_model": "settings",
    "describe_llm_settings": "settings",
    "llm_configured": "settings",
    "load_settings": "settings",
    "resolve_model": "settings",
    "ChatModel": "types",
    "ChatResponse": "types",
    "LLMConfigError": "types",
    "LLMError": "types",
    "Message": "types",
    "Role": "types",
    "ToolCall": "types",
    "ToolSpec": "types",
    "Usage": "types",
})

__all__ = [
    "ChatModel",
    "ChatResponse",
    "Endpoint",
    "EndpointKind",
    "LLMConfigError",
    "LLMError",
    "LLMSettings",
    "Message",
    "ModelPrice",
    "OpenAIChatModel",
    "PriceTable",
    "RetryPolicy",
    "Role",
    "Secret",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "chat_model",
    "describe_llm_settings",
    "llm_configured",
    "load_settings",
    "resolve_model",
]
