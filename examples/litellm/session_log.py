"""A LiteLLM proxy logging callback that appends each call's standard logging payload to a
JSONL file, for `bakeoff bench convert-log --from litellm` (docs/artifacts.md, "Session files").

In the proxy's config.yaml (this file beside it, LiteLLM 1.106):

    litellm_settings:
      callbacks: session_log.proxy_handler_instance

and BAKEOFF_SESSION_LOG=/path/to/payloads.jsonl in the proxy's environment (without it, the
payloads go to session-log.jsonl beside this file). Clients group a
session's calls with `litellm_session_id` in the request body (docs.litellm.ai, "Session
Logs"). The payload holds the messages and replies: keep the file where your prompts may be.
"""

import json
import os

from litellm.integrations.custom_logger import CustomLogger


class SessionLog(CustomLogger):
    def _write(self, kwargs):
        payload = kwargs.get("standard_logging_object")
        path = os.environ.get("BAKEOFF_SESSION_LOG") or os.path.join(
            os.path.dirname(os.path.abspath(__file__)), "session-log.jsonl"
        )
        if payload is None:
            return
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(payload, default=str) + "\n")

    async def async_log_success_event(self, kwargs, response_obj, start_time, end_time):
        self._write(kwargs)

    async def async_log_failure_event(self, kwargs, response_obj, start_time, end_time):
        self._write(kwargs)


proxy_handler_instance = SessionLog()
