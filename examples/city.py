"""A city described by a JSON Schema: the answer is parsed JSON that validates, by construction.

Run: python examples/city.py
"""

import json

import structgen

SCHEMA = {
    "title": "City",
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "country": {"type": "string"},
        "population": {"type": "integer", "minimum": 0},
        "districts": {
            "type": "array",
            "items": {"type": "string"},
            "maxItems": 5,
        },
    },
    "required": ["name", "country", "population", "districts"],
    "additionalProperties": False,
}

PROMPT = "Describe the city of Paris in JSON: its name, country, population and a few of its districts."


def main() -> None:
    model, tokenizer = structgen.load_default_model()
    city = structgen.generate_json(model, tokenizer, PROMPT, SCHEMA, max_new_tokens=160)
    print(f"prompt: {PROMPT}")
    print(json.dumps(city, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
