"""`--judge agent`: the configured agent decides whether a finding states a required claim when
the words differ. Any fault of it (crash, timeout, unreadable or invalid answer) is a failed
match, never a pass."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from eyeful.agents.agent import extract_json
from eyeful.agents.providers import Provider, ProviderError
from eyeful.agents.transport import make_provider
from eyeful.config import AgentConfig
from eyeful.evaluate.judges import FindingView, SemanticMatch

PROMPT = """You grade a code review. Does the finding below state this claim (the same problem,
possibly in other words)? Claim: {claim}

Finding title: {title}
Finding body: {body}

Answer with one JSON object only: {{"states_claim": true or false, "reason": "one sentence"}}
"""


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    states_claim: bool
    reason: str


def agent_matcher(config: AgentConfig, cwd: Path) -> SemanticMatch:
    """A matcher asking the agent; built up front so a bad agent setting stops the eval."""
    provider: Provider = make_provider(config)

    def match(finding: FindingView, claim: str) -> tuple[bool, str]:
        if not claim.strip():
            return False, "an empty claim is matched by words only"
        prompt = PROMPT.format(claim=claim, title=finding.title, body=finding.body)
        try:
            text = provider.complete(prompt, cwd=cwd, want_json=True).text
            answer = Answer.model_validate(extract_json(text))
        except (ProviderError, ValueError, ValidationError) as err:
            first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            return False, f"agent fault: {first}"
        except Exception as err:
            return False, f"agent fault: {type(err).__name__}"
        return answer.states_claim, answer.reason

    return match
