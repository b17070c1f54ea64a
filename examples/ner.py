"""Named-entity recognition into a pydantic model: the answer comes back as a validated instance.

Run: python examples/ner.py
"""

from pydantic import BaseModel

import structgen


class Entities(BaseModel):
    person: list[str]
    organization: list[str]
    location: list[str]
    miscellaneous: list[str]


SENTENCE = "Only France and Britain backed Fischler 's proposal ."
# One worked example (from the same CoNLL-2003 news corpus) helps a 135M-parameter model a lot;
# it is a completion prompt, so it goes in as plain text (chat=False), not through the chat template.
PROMPT = (
    "Extract the named entities of the sentence as JSON lists: person, organization, location, "
    "miscellaneous.\n"
    'Sentence: EU rejects German call to boycott British lamb .\n'
    'Entities: {"person": [], "organization": ["EU"], "location": [], "miscellaneous": ["German", "British"]}\n'
    f"Sentence: {SENTENCE}\n"
    "Entities:"
)


def main() -> None:
    model, tokenizer = structgen.load_default_model()
    entities = structgen.generate_pydantic(model, tokenizer, PROMPT, Entities, max_new_tokens=160, chat=False)
    print(f"sentence: {SENTENCE}")
    print(repr(entities))


if __name__ == "__main__":
    main()
