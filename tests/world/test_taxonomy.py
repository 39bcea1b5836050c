"""Tests of flaneur.world.taxonomy; expectations are hand-checked against the OSM wiki."""

import json
from importlib import resources

import pytest

from flaneur.world.taxonomy import (
    CATEGORIES,
    GROUPS,
    attributes_from_tags,
    categorize,
    category_label,
    normalize_category,
    split_targets,
)

TAG_CASES = [
    ({"amenity": "cafe"}, ("cafe",)),
    ({"shop": "convenience"}, ("convenience_store",)),
    ({"shop": "supermarket"}, ("supermarket",)),
    ({"shop": "mall"}, ("shopping_mall",)),
    ({"shop": "department_store"}, ("department_store",)),
    ({"amenity": "bank", "atm": "yes"}, ("bank", "atm")),
    ({"amenity": "bank", "atm": "no"}, ("bank",)),
    ({"amenity": "atm"}, ("atm",)),
    ({"shop": "convenience", "atm": "yes"}, ("convenience_store", "atm")),
    ({"amenity": "pharmacy", "healthcare": "pharmacy"}, ("pharmacy", "healthcare")),
    ({"amenity": "clinic"}, ("clinic", "healthcare")),
    ({"healthcare": "hospital"}, ("hospital", "healthcare")),
    ({"amenity": "doctors"}, ("doctor", "healthcare")),
    ({"amenity": "veterinary"}, ("veterinary",)),
    ({"tourism": "hotel"}, ("hotel", "lodging")),
    ({"tourism": "hostel"}, ("hostel", "lodging")),
    ({"public_transport": "platform", "bus": "yes"}, ("bus_stop",)),
    ({"highway": "bus_stop"}, ("bus_stop",)),
    ({"highway": "bus_stop", "public_transport": "platform", "bus": "yes"}, ("bus_stop",)),
    ({"public_transport": "platform", "train": "yes"}, ()),
    ({"amenity": "bus_station"}, ("bus_station", "transit_station")),
    ({"railway": "station", "station": "subway"}, ("subway_station", "transit_station")),
    (
        {"railway": "station", "public_transport": "station", "subway": "yes", "train": "yes"},
        ("subway_station", "train_station", "transit_station"),
    ),
    ({"railway": "station"}, ("train_station", "transit_station")),
    ({"railway": "subway_entrance"}, ("subway_entrance", "subway_station", "transit_station")),
    ({"railway": "tram_stop"}, ("tram_stop",)),
    ({"amenity": "parking"}, ("parking",)),
    ({"amenity": "toilets"}, ("restroom",)),
    ({"amenity": "cinema"}, ("cinema",)),
    ({"leisure": "fitness_centre"}, ("gym",)),
    ({"leisure": "sports_centre", "sport": "fitness;yoga"}, ("gym", "sports_center")),
    ({"leisure": "sports_centre", "sport": "tennis"}, ("sports_center",)),
    ({"leisure": "park"}, ("park",)),
    ({"leisure": "playground"}, ("playground",)),
    ({"amenity": "library"}, ("library",)),
    ({"shop": "books"}, ("book_store",)),
    ({"tourism": "museum"}, ("museum",)),
    ({"amenity": "fast_food", "cuisine": "burger"}, ("fast_food", "restaurant")),
    ({"amenity": "pub"}, ("pub", "bar")),
    ({"amenity": "cafe;restaurant"}, ("cafe", "restaurant")),
    ({"amenity": "vending_machine", "vending": "drinks"}, ("vending_machine",)),
    ({"amenity": "vending_machine", "vending": "parking_tickets"}, ()),
    ({"amenity": "drinking_water"}, ("drinking_water",)),
    ({"amenity": "charging_station"}, ("charging_station",)),
    ({"amenity": "fuel"}, ("gas_station",)),
    ({"shop": "mobile_phone"}, ("mobile_phone_store",)),
    ({"shop": "greengrocer"}, ("greengrocer",)),
    ({"amenity": "place_of_worship", "religion": "buddhist"}, ("temple", "place_of_worship")),
    ({"amenity": "place_of_worship"}, ("place_of_worship",)),
    ({"tourism": "information", "information": "board"}, ()),
    ({"tourism": "information", "information": "office"}, ("tourist_information",)),
    ({"aeroway": "aerodrome"}, ("airport",)),
    ({"office": "insurance"}, ("insurance_agency",)),
    ({"amenity": " Fast Food "}, ("fast_food", "restaurant")),
    ({"brand": "Starbucks", "name": "Starbucks"}, ()),
    ({"building": "yes", "highway": "residential"}, ()),
]


@pytest.mark.parametrize(("tags", "expected"), TAG_CASES)
def test_categorize(tags, expected):
    assert categorize(tags) == expected


@pytest.mark.parametrize(
    "tags",
    [
        {},
        {"amenity": "yes"},
        {"shop": None},
        {"amenity": 5},
        {"leisure": 1.5, 7: "cafe"},
        {"amenity": ""},
        {"amenity": ";;"},
        {"shop": ["books"]},
        {"railway": "station", "station": None},
    ],
)
def test_categorize_odd_values_never_raise(tags):
    result = categorize(tags)
    assert isinstance(result, tuple)
    assert all(name in CATEGORIES for name in result)


def test_categorize_non_mapping_is_empty():
    assert categorize(None) == ()  # type: ignore[arg-type]
    assert attributes_from_tags(None) == {}  # type: ignore[arg-type]


def test_attributes_restaurant():
    tags = {
        "amenity": "restaurant",
        "name": "Noodle House",
        "brand": "Xiabuxiabu",
        "brand:wikidata": "Q8045094",
        "cuisine": "chinese; hot_pot;chinese",
        "wheelchair": "limited",
        "outdoor_seating": "terrace",
        "opening_hours": "Mo-Su 10:00-22:00",
        "takeaway": "only",
        "delivery": "no",
        "diet:vegetarian": "yes",
        "diet:vegan": "only",
        "internet_access": "wifi",
        "addr:street": "Nanjing West Road",
        "addr:housenumber": "1266",
        "contact:phone": "+86 21 1234 5678",
        "website": "https://example.org",
        "level": "2",
    }
    assert attributes_from_tags(tags) == {
        "brand": "Xiabuxiabu",
        "brand:wikidata": "Q8045094",
        "cuisine": ["chinese", "hot_pot"],
        "wheelchair": "limited",
        "outdoor_seating": True,
        "opening_hours": "Mo-Su 10:00-22:00",
        "takeaway": True,
        "delivery": False,
        "diet:vegetarian": "yes",
        "diet:vegan": "only",
        "internet_access": "wlan",
        "address": "Nanjing West Road 1266",
        "phone": "+86 21 1234 5678",
        "website": "https://example.org",
        "level": "2",
    }


def test_attributes_only_present_keys_and_fallbacks():
    assert attributes_from_tags({"amenity": "bench"}) == {}
    assert attributes_from_tags({"brand:en": "FamilyMart"}) == {
        "brand": "FamilyMart",
        "brand:en": "FamilyMart",
    }
    assert attributes_from_tags({"brand": "全家", "brand:en": "FamilyMart"})["brand"] == "全家"
    assert attributes_from_tags({"addr:full": "1 Main St"}) == {"address": "1 Main St"}
    toilets = {
        "amenity": "toilets",
        "wheelchair": "designated",
        "changing_table": "yes",
        "toilets:wheelchair": "no",
        "fee": "no",
        "access": "yes",
    }
    assert attributes_from_tags(toilets) == {
        "wheelchair": "yes",
        "changing_table": True,
        "toilets:wheelchair": "no",
        "fee": False,
        "access": "yes",
    }


def test_attributes_odd_values_are_skipped():
    tags = {
        "wheelchair": "maybe",
        "outdoor_seating": "unknown",
        "takeaway": "sometimes",
        "cuisine": None,
        "brand": "  ",
        "opening_hours": 24,
        "level": None,
    }
    assert attributes_from_tags(tags) == {"opening_hours": "24"}
    assert attributes_from_tags({"outdoor_seating": "no", "toilets": "customers"}) == {
        "outdoor_seating": False,
        "toilets": True,
    }


TEXT_CASES = {
    "coffee shop": "cafe",
    "Café": "cafe",
    "Convenience Store": "convenience_store",
    "convenience stores": "convenience_store",
    "ATM": "atm",
    "ATMs": "atm",
    "cash machine": "atm",
    "subway station": "subway_station",
    "Metro station": "subway_station",
    "restroom": "restroom",
    "toilet": "restroom",
    "WC": "restroom",
    "public toilets": "restroom",
    "book store": "book_store",
    "bookstore": "book_store",
    "Book-Shop": "book_store",
    "pharmacies": "pharmacy",
    "drugstore": "pharmacy",
    "shopping centre": "shopping_mall",
    "movie theatre": "cinema",
    "fitness centre": "gym",
    "parking lots": "parking",
    "car park": "parking",
    "bus stop": "bus_stop",
    "bus station": "bus_station",
    "the hotel": "hotel",
    "B&B": "guest_house",
    "libraries": "library",
    "vending machine": "vending_machine",
    "drinking water": "drinking_water",
    "bench": "bench",
    "charging station": "charging_station",
    "fast food": "fast_food",
    "bakery": "bakery",
    "bar": "bar",
    "pub": "pub",
    "ice cream": "ice_cream",
    "churches": "church",
    "healthcare facility": "healthcare",
    "fruit and vegetable store": "greengrocer",
    "convenience_store": "convenience_store",
}


@pytest.mark.parametrize(("text", "expected"), TEXT_CASES.items())
def test_normalize_category(text, expected):
    assert normalize_category(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Starbucks",
        "KFC",
        "McDonald's",
        "Bank of China",
        "7-Eleven",
        "",
        "   ",
        "yes",
        "bank and clinic",
        "I am thirsty",
        "spaceport",
        None,
        42,
    ],
)
def test_normalize_category_unknown_is_none(text):
    assert normalize_category(text) is None


def test_category_label():
    assert category_label("convenience_store") == "convenience store"
    assert category_label("atm") == "ATM"
    assert category_label("healthcare") == "healthcare facility"
    assert category_label("parking") == "parking lot"
    assert category_label("not_a_category") == "not a category"


# Every distinct `folder` of CitySeeker shanghai2/questions.json (35 values, copied by hand).
CITYSEEKER_CATEGORY_FOLDERS = {  # question1, question5, question6: one category
    "convenience store": "convenience_store",
    "restaurant": "restaurant",
    "shopping mall": "shopping_mall",
    "hotel": "hotel",
    "bank": "bank",
    "healthcare facility": "healthcare",
    "subway station": "subway_station",
    "bus station": "bus_station",
    "restroom": "restroom",
    "gym": "gym",
    "coffee shop": "cafe",
    "parking lot": "parking",
    "cinema": "cinema",
    "ATM": "atm",
}
CITYSEEKER_LIST_FOLDERS = {  # question2: categories in order
    "convenience store and hotel": ("convenience_store", "hotel"),
    "restaurant and convenience store": ("restaurant", "convenience_store"),
    "restaurant and bank": ("restaurant", "bank"),
    "shopping mall and hotel": ("shopping_mall", "hotel"),
    "clinic and convenience store": ("clinic", "convenience_store"),
    "clinic and hotel": ("clinic", "hotel"),
    "bank and shopping mall": ("bank", "shopping_mall"),
    "bank and clinic": ("bank", "clinic"),
}
CITYSEEKER_BRAND_FOLDERS = {  # question4: brands, never categories
    "KFC or McDonald's": ("KFC", "McDonald's"),
    "FamilyMart, Lawson, Bianlifeng, or 7-Eleven": (
        "FamilyMart",
        "Lawson",
        "Bianlifeng",
        "7-Eleven",
    ),
    "Bank of China": ("Bank of China",),
}
CITYSEEKER_NEED_FOLDERS = {  # question7: needs; categories that can satisfy them must exist
    "I am hungry": ("restaurant", "fast_food", "food_court", "cafe", "bakery", "convenience_store"),
    "I am thirsty": (
        "convenience_store",
        "cafe",
        "supermarket",
        "vending_machine",
        "drinking_water",
        "beverage_store",
    ),
    "My phone balance is low and I need to recharge it": (
        "mobile_phone_store",
        "telecom_office",
        "convenience_store",
    ),
    "I am not feeling well": ("pharmacy", "clinic", "hospital", "doctor", "healthcare"),
    "I want to bring my child to play": (
        "playground",
        "park",
        "amusement_park",
        "zoo",
        "aquarium",
        "toy_store",
    ),
    "I want to exercise": (
        "gym",
        "sports_center",
        "fitness_station",
        "swimming_pool",
        "sports_field",
        "park",
    ),
    "I want to buy fruits and vegetables": (
        "greengrocer",
        "supermarket",
        "marketplace",
        "convenience_store",
    ),
    "I need to go to the airport": (
        "airport",
        "subway_station",
        "bus_stop",
        "bus_station",
        "train_station",
        "taxi_stand",
    ),
    "I want to find a place to work with Wi-Fi": (
        "cafe",
        "library",
        "coworking_space",
        "fast_food",
    ),
    "I want to rest and read": ("library", "book_store", "cafe", "park", "bench"),
}


def test_cityseeker_folders_are_all_listed_once():
    groups = (
        CITYSEEKER_CATEGORY_FOLDERS,
        CITYSEEKER_LIST_FOLDERS,
        CITYSEEKER_BRAND_FOLDERS,
        CITYSEEKER_NEED_FOLDERS,
    )
    folders = [folder for group in groups for folder in group]
    assert len(folders) == len(set(folders)) == 35


@pytest.mark.parametrize(("folder", "expected"), CITYSEEKER_CATEGORY_FOLDERS.items())
def test_cityseeker_category_folders(folder, expected):
    assert normalize_category(folder) == expected
    assert split_targets(folder) == (folder,)


@pytest.mark.parametrize(("folder", "expected"), CITYSEEKER_LIST_FOLDERS.items())
def test_cityseeker_list_folders(folder, expected):
    assert normalize_category(folder) is None
    assert tuple(normalize_category(item) for item in split_targets(folder)) == expected


@pytest.mark.parametrize(("folder", "brands"), CITYSEEKER_BRAND_FOLDERS.items())
def test_cityseeker_brand_folders(folder, brands):
    assert normalize_category(folder) is None
    assert split_targets(folder) == brands
    assert all(normalize_category(brand) is None for brand in brands)


@pytest.mark.parametrize(("need", "categories"), CITYSEEKER_NEED_FOLDERS.items())
def test_cityseeker_need_categories_exist(need, categories):
    assert normalize_category(need) is None
    assert all(name in CATEGORIES for name in categories)


def _table():
    text = resources.files("flaneur.world").joinpath("taxonomy.json").read_text("utf-8")
    return json.loads(text)


def test_every_referenced_category_exists_with_label_and_group():
    table = _table()
    referenced = {
        cat for values in table["tags"].values() for cats in values.values() for cat in cats
    }
    referenced |= {
        cat for rules in table["refinements"].values() for rule in rules for cat in rule["then"]
    }
    referenced |= {
        cat for values in table["features"].values() for cats in values.values() for cat in cats
    }
    referenced |= {parent for info in CATEGORIES.values() for parent in info.parents}
    assert referenced <= set(CATEGORIES)
    for name, info in CATEGORIES.items():
        assert info.label and info.group in GROUPS, name
        assert name not in info.parents
    for tag in table["refinements"]:
        key, value = tag.split("=")
        assert value in table["tags"][key], tag
    assert set(table["key_order"]) == set(table["tags"])


def test_every_table_entry_categorizes_consistently():
    for key, values in _table()["tags"].items():
        for value, cats in values.items():
            result = categorize({key: value})
            assert result[: len(cats)] == tuple(cats) or not cats, (key, value)
            assert len(result) == len(set(result))


def test_every_category_name_and_label_normalizes_to_itself():
    for name, info in CATEGORIES.items():
        assert normalize_category(name) == name
        assert normalize_category(info.label) == name
        assert all(normalize_category(synonym) == name for synonym in info.synonyms)
