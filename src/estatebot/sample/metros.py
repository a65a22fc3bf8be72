"""Where the sample listings are: eight US metro areas and their real places.

Each :class:`Metro` draws from a list of residential ZIP codes checked against the ``zipcodes``
package (:func:`check_metro`), which also gives the ZIP's centre (:func:`zip_centre`); a listing
sits within about a kilometre of it. A metro also holds its real street names and its price
levels.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

__all__ = ["METROS", "Metro", "check_metro", "zip_centre"]


@dataclass(frozen=True)
class Metro:
    """One metro area: where it is, its MLS number prefix, and its price levels."""

    city: str
    state: str
    mls_prefix: str
    zips: tuple[str, ...]
    #: Typical sale price per square foot of a single-family home.
    sale_per_sqft: float
    #: Typical monthly rent per square foot.
    rent_per_sqft: float
    condo_share: float
    years: tuple[int, int]
    lot_sqft: tuple[int, int]
    #: Real street names of the city, with their suffixes and directions.
    streets: tuple[str, ...]
    #: The range of house numbers on them.
    numbers: tuple[int, int]
    views: tuple[str, ...]
    pool_share: float
    weight: float = 1.0


METROS: tuple[Metro, ...] = (
    Metro("Austin", "TX", "AU",
          ("78702", "78703", "78704", "78723", "78731", "78745", "78748", "78751", "78757",
           "78759"),
          330, 1.65, 0.15, (1948, 2024), (5500, 10500),
          ("S Lamar Blvd", "Burnet Rd", "Manor Rd", "Riverside Dr", "S Congress Ave", "Duval St",
           "Manchaca Rd", "Guadalupe St", "W Koenig Ln", "Slaughter Ln"),
          (100, 9899),
          ("Hill Country", "City", "Greenbelt"), 0.30, weight=1.2),
    Metro("Denver", "CO", "DV",
          ("80203", "80205", "80206", "80210", "80211", "80218", "80220", "80224", "80238"),
          380, 1.85, 0.20, (1895, 2024), (4500, 8000),
          ("E Colfax Ave", "Federal Blvd", "Speer Blvd", "Tennyson St", "Downing St",
           "N Williams St", "E Yale Ave", "Montview Blvd", "Tejon St", "Holly St"),
          (100, 4999),
          ("Mountain(s)", "City", "Park/Greenbelt"), 0.05),
    Metro("Miami", "FL", "MI",
          ("33125", "33127", "33129", "33131", "33133", "33137", "33138", "33145", "33155"),
          470, 2.45, 0.45, (1935, 2024), (5000, 9000),
          ("Biscayne Blvd", "Coral Way", "W Flagler St", "Brickell Ave", "Bird Rd", "Tigertail Ave",
           "Douglas Rd", "Ponce de Leon Blvd", "Kumquat Ave", "SW 8th St"),
          (100, 8999),
          ("Water", "Bay", "City", "Ocean"), 0.45),
    Metro("Boston", "MA", "BN",
          ("02108", "02109", "02110", "02111", "02113", "02114", "02115", "02116", "02118",
           "02210", "02215"),
          720, 3.30, 0.50, (1860, 2023), (1800, 5000),
          ("Beacon St", "Commonwealth Ave", "Tremont St", "Hanover St", "Marlborough St",
           "Charles St", "Salem St", "Newbury St", "Dartmouth St", "Shawmut Ave"),
          (1, 420),
          ("City", "Water", "Park"), 0.02, weight=0.9),
    Metro("Seattle", "WA", "SE",
          ("98102", "98103", "98105", "98107", "98112", "98115", "98116", "98117", "98118",
           "98122"),
          590, 2.60, 0.30, (1900, 2024), (4000, 7500),
          ("Aurora Ave N", "Rainier Ave S", "Fremont Ave N", "Greenwood Ave N", "E Madison St",
           "Roosevelt Way NE", "Dexter Ave N", "NW Market St", "Alki Ave SW", "Phinney Ave N"),
          (100, 9999),
          ("Mountain(s)", "Water", "City", "Territorial"), 0.03),
    Metro("Phoenix", "AZ", "PX",
          ("85008", "85012", "85013", "85014", "85016", "85018", "85020", "85028", "85032",
           "85044"),
          290, 1.45, 0.10, (1950, 2024), (6000, 12000),
          ("E Camelback Rd", "W Indian School Rd", "E Thomas Rd", "E McDowell Rd", "W Osborn Rd",
           "N Central Ave", "E Cactus Rd", "E Shea Blvd", "W Bell Rd", "E Thunderbird Rd"),
          (1000, 9999),
          ("Mountain(s)", "City Lights", "Desert"), 0.45),
    Metro("Chicago", "IL", "CH",
          ("60610", "60613", "60614", "60618", "60622", "60625", "60640", "60647", "60657",
           "60660"),
          265, 2.00, 0.40, (1885, 2024), (3000, 4800),
          ("N Halsted St", "N Clark St", "N Damen Ave", "W Belmont Ave", "W Fullerton Ave",
           "N Ashland Ave", "W Armitage Ave", "W Wellington Ave", "N Lincoln Ave",
           "W Diversey Pkwy"),
          (400, 5999),
          ("City", "Lake", "Park"), 0.02),
    Metro("San Antonio", "TX", "SA",
          ("78209", "78210", "78212", "78213", "78216", "78230", "78249", "78251", "78258"),
          185, 1.25, 0.08, (1920, 2024), (6000, 11000),
          ("Broadway St", "Blanco Rd", "Nacogdoches Rd", "Hildebrand Ave", "Fredericksburg Rd",
           "Sunset Rd", "W Mistletoe Ave", "Stone Oak Pkwy", "Huebner Rd", "Babcock Rd"),
          (100, 9899),
          ("Hill Country", "Greenbelt", "City"), 0.30, weight=0.9),
)  # fmt: skip


@cache
def zip_centre(zip_code: str) -> tuple[str, str, float, float]:
    """A ZIP code's city, state, latitude and longitude, from the ``zipcodes`` package."""
    try:
        import zipcodes
    except ImportError:  # a dev/sample dependency, not needed to use the toolkit
        raise RuntimeError(
            "the sample generator needs the 'zipcodes' package: pip install 'estatebot[sample]'"
        ) from None
    found = zipcodes.matching(zip_code)  # type: ignore[no-untyped-call]
    if not found:
        raise ValueError(f"ZIP code {zip_code} is not in the zipcodes data")
    entry = found[0]
    return str(entry["city"]), str(entry["state"]), float(entry["lat"]), float(entry["long"])


def check_metro(metro: Metro) -> None:
    """Raise ValueError if one of the metro's ZIP codes lies in another city."""
    for zip_code in metro.zips:
        city, state, _, _ = zip_centre(zip_code)
        if (city, state) != (metro.city, metro.state):
            raise ValueError(f"ZIP {zip_code} is in {city}, {state}, not {metro.city}")
