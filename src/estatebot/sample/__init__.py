"""Seeded, realistic sample data: a market of listings, its MLS exports, and chat tests.

>>> from estatebot import sample
>>> week1 = sample.market(seed=42)                  # doctest: +SKIP
>>> week2, changes = sample.next_week(week1, 42)    # doctest: +SKIP
>>> sample.write_reso_xlsx(week1, "mls_export.xlsx")  # doctest: +SKIP

``python -m estatebot.sample --out sample_data --seed 42 --pitfalls`` writes every sample file.
The generator needs the ``zipcodes`` package (``pip install 'estatebot[sample]'``).
"""

from .generate import FILES, Generated, chat_cases, generate, write_demo_seed
from .listing import DETAIL_FIELDS
from .market import AS_OF, Change, api_fields, is_published, market, next_week
from .metros import METROS, Metro, zip_centre
from .pitfalls import Pitfall, write_pitfalls
from .styles import (
    READ_OPTIONS,
    Style,
    mls_system_table,
    portal_table,
    reso_table,
    write_mls_system_xlsx,
    write_portal_csv,
    write_reso_xlsx,
)

__all__ = [
    "AS_OF",
    "DETAIL_FIELDS",
    "FILES",
    "METROS",
    "READ_OPTIONS",
    "Change",
    "Generated",
    "Metro",
    "Pitfall",
    "Style",
    "api_fields",
    "chat_cases",
    "generate",
    "is_published",
    "market",
    "mls_system_table",
    "next_week",
    "portal_table",
    "reso_table",
    "write_demo_seed",
    "write_mls_system_xlsx",
    "write_pitfalls",
    "write_portal_csv",
    "write_reso_xlsx",
    "zip_centre",
]
