"""The base of the pydantic models a review uses (the eval's and the agents' keep pydantic's
own, off that path): each is built (its validator and serializer made) the
first time it is used, not when its module is imported. Most of a run's models are never used
(a passing review makes no gate, verdict or failure), and building them all at import was a
third of eyeful's own start-up."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    model_config = ConfigDict(defer_build=True)
