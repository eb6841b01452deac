"""What a quote assumes a plan and the stages' replies look like, before any plan exists.

Measured on the demo reader's `collate run` over the 40 demo questions (the run folder's traces and the
fake server's requests): a plan has 1.0 sub-query and 1.55 fields per question; a field's description
is 11 characters; an extraction reply is about 37 tokens (characters / 4) per field; the code is 620 characters, the
printed result 178 and the answer 62. In the one batched run, a document asked by q questions was
asked 282 fields over 278 (question, document) pairs: about one field per question that reads it
(several questions ask the same field of a document; others ask several fields), so FIELDS_PER_READ = 1.0.
Passages per extraction call: the quote searches each document with the questions that read it, as the
extractor searches with its sub-queries (programs/quote/passages.py); what the fields' own searches add
beyond those questions' top k is measured: 1.42 passages per field the plan asked (276 fields on 56
documents; `bench/estimate_accuracy.py` prints it per run, 2026-12-06). The same figure with the
any-filing reader on the FinanceBench filings, whose field is a phrase of the question and whose sub-query
the question itself: 2.6 per field over the 38-question run, 0.9-3.3 per single-question ask (not used:
the demo's figure is the one kept, the real filings are the check). A language model may plan more fields and write longer replies than the
rule-based reader: these are the demo's figures, not a bound.
"""

from __future__ import annotations

FIELDS_PER_QUESTION = 1.55  # fields a plan asks (the code-writer's columns, the answer's records)
SUBQUERIES_PER_QUESTION = 1  # sub-queries a plan has
FIELDS_PER_READ = 1.0  # fields a document's one extraction call asks per question that reads it
PASSAGES_BEYOND_QUESTIONS = 1.42  # passages a field's own search adds beyond its questions' top k (demo)
REPLY_QUOTE_CHARS = 40  # an extracted value's verbatim quote
ANSWER_CHARS = 62
RESULT_CHARS = 178  # what the analysis code prints
CODE_CHARS = 620  # the analysis code
PLAN_REASONING_CHARS = 60
NORMALIZE_SHARE = 0.0  # normalizer calls per question: the rules parsed every demo value (0 calls of 176)

# Representative fields and sub-queries in the filings' language (the demo's own, in its wording).
FIELDS = {
    "zh": [
        ("capital_adequacy_ratio", "资本充足率。", "percent", "percent", "15.88%", "%"),
        ("total_operating_cost", "营业总成本。", "number", "CNY", "3,239,006", "万元"),
        ("net_profit", "净利润。", "number", "CNY", "1,285,440", "万元"),
        ("office_address", "办公地址。", "string", "none", "深圳市福田区深南大道1号", ""),
        ("largest_shareholder_ratio", "第一大股东持股比例。", "percent", "percent", "45.92%", "%"),
        ("female_executive_count", "女性高管人数。", "integer", "people", "4", "人"),
    ],
    "en": [
        ("total_assets", "total assets.", "number", "USD", "352,583", "USD millions"),
        ("net_income", "net income.", "number", "USD", "96,995", "USD millions"),
        ("operating_revenue", "operating revenue.", "number", "USD", "383,285", "USD millions"),
        ("total_liabilities", "total liabilities.", "number", "USD", "290,437", "USD millions"),
    ],
}
SUBQUERY = {"zh": "该文件披露的{}是多少？", "en": "What does this filing report as {}"}
REASONING = {
    "zh": "需要每家公司的{}，按代码比较。",
    "en": "Each company's {} is needed; compare them by symbol.",
}
ANSWER = {
    "zh": "2021年资本充足率最高的三家公司股票代码为601536（15.88%）、000955（15.03%）、002530（14.87%）。",
    "en": "The three companies with the highest total assets in 2023 are AAPL ($352.6B), MSFT and GOOG.",
}
CODE_LINE = "top = df.dropna(subset=['value']).sort_values('value', ascending=False).head(3)"
