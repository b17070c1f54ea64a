"""Question answering over company documents, where every answer is a verbatim span of the source.

Run: python examples/rag_extract.py

A toy retrieval step picks the most relevant of three made-up company documents by keyword overlap;
the model then answers in JSON whose answer fields are marked ``"x-extract": true``, so with
``extract_from=`` they can only be substrings of the retrieved document: the model may pick the
wrong span, but it cannot invent one. The ``confidence`` field is not marked, so it is free.
"""

import json
import re

import structgen

DOCUMENTS = {
    "earnings": (
        "Northwind Robotics - Q3 2024 earnings summary.\n"
        "Revenue was $48.2 million, up 17% from Q3 2023. Net income was $6.1 million.\n"
        "Growth came mainly from the warehouse automation line. Guidance for Q4: revenue of "
        "$50 to $53 million. CFO Dana Whitfield said: \"Margins improved for the fourth quarter in a row.\""
    ),
    "board": (
        "Northwind Robotics - minutes of the board meeting of 12 September 2024.\n"
        "The board approved the acquisition of Keel Sensors for $12 million in cash. "
        "Priya Raman was appointed chair of the audit committee. The next meeting is on 5 December 2024."
    ),
    "research": (
        "Northwind Robotics - research team update.\n"
        "The research team, led by Dr. Tomás Ibarra, has 14 engineers in Lisbon. "
        "Its current project is a gripper that handles fragile parcels; field trials start in January 2025."
    ),
}

QUESTIONS = [
    "What was the revenue in Q3 2024?",
    "Which company did the board approve to acquire?",
    "Who leads the research team?",
]

SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "minLength": 1, "maxLength": 60, "x-extract": True},
        "confidence": {"enum": ["high", "medium", "low"]},
    },
    "required": ["answer", "confidence"],
    "additionalProperties": False,
}


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2}


def retrieve(question: str) -> str:
    """The document sharing the most words with the question (a stand-in for a real retriever)."""
    return max(DOCUMENTS, key=lambda name: len(words(question) & words(name + " " + DOCUMENTS[name])))


def main() -> None:
    model, tokenizer = structgen.load_default_model()
    for question in QUESTIONS:
        name = retrieve(question)
        context = DOCUMENTS[name]
        messages = [
            {"role": "system", "content": "Answer with a short exact quote from the context."},
            {"role": "user", "content": f"Context:\n{context}\n\nQuestion: {question}"},
        ]
        result = structgen.generate_json(model, tokenizer, messages, SCHEMA, extract_from=context, max_new_tokens=48)
        assert result["answer"] in context  # guaranteed by construction
        print(f"Q: {question}\n   document: {name}\n   {json.dumps(result, ensure_ascii=False)}")


if __name__ == "__main__":
    main()
