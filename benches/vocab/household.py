"""Word lists and templates for the household history (`benches.household`): data only.

One parent's conversations with an assistant about family logistics: the houses the family deals with
(their own, a parent's flat, a flat they let), relatives and friends, repairs, bills, bookings and
gatherings. A held-out set for `benches.history` (an operations lead), written apart from it: no shared
templates, other entities (street addresses and people's full names instead of coded identifiers, so the
identifier guard and the glued-identifier BM25 terms do not carry it), another period, evenings and weekends.

Every topic row is (fact phrase, close paraphrase, keyword, reworded 1, reworded 2). The close paraphrase
keeps the stems (what `long` questions say); the reworded phrases say the same with other words and are
checked by `household.check_household` to share no content word with the fact's own turns.
Twelve rows per table, so each topic recurs across many conversations and only the combination
(address + problem, address + bill, person + booking, person + occasion) finds a fact.
"""

STREETS = ("Alder", "Rowan", "Larch", "Hazel", "Juniper", "Willow", "Beech", "Cedar", "Holly", "Maple",
           "Linden", "Aspen", "Elder", "Hawthorn", "Sycamore", "Chestnut", "Poplar", "Yew", "Laurel", "Myrtle",
           "Ashdown", "Brambling", "Cobden", "Dunmore", "Fairholme", "Glebe", "Harcourt", "Kingsley",
           "Lonsdale", "Marlow", "Newbold", "Orchard", "Pendle", "Quarry", "Radley", "Selborne", "Thornby",
           "Upton", "Vicarage", "Wexford")
STREET_KINDS = ("Close", "Road", "Lane", "Avenue", "Street", "Crescent", "Gardens", "Way")

# People the family knows (entities of bookings and gatherings), by full name. The family itself recurs
# everywhere by first name only (small talk), and tradespeople (answers) come from their own lists.
PEOPLE_FIRST = ("Hattie", "Joel", "Marnie", "Callum", "Imogen", "Rory", "Tamsin", "Euan", "Philippa", "Declan",
                "Bronwen", "Niall", "Harriet", "Ewan", "Clementine", "Fergus", "Rosalind", "Alasdair", "Martha",
                "Gideon", "Verity", "Crispin", "Annabel", "Lachlan", "Henrietta", "Barnaby", "Ottilie", "Magnus",
                "Josephine", "Dougal", "Felicity", "Ambrose", "Cordelia", "Jasper", "Wilhelmina", "Rupert",
                "Esme", "Tobias", "Lavinia", "Humphrey", "Araminta", "Cedric", "Perpetua", "Ignatius", "Isolde",
                "Leopold", "Seraphina", "Montague", "Beatrix", "Ptolemy", "Marigold", "Augustus", "Delphine",
                "Bartholomew", "Evangeline", "Cornelius", "Theodora", "Percival", "Winifred", "Lysander")
PEOPLE_LAST = ("Okonjo", "Penhaligon", "Ashworth", "Trelawney", "Fairbairn", "Cartwright", "Blackwood",
               "Pemberton", "Hollingsworth", "Featherstone", "Aldridge", "Birtwistle", "Cholmondeley",
               "Drinkwater", "Entwistle", "Fothergill", "Greenhalgh", "Hetherington", "Illingworth",
               "Kettleborough", "Lambourne", "Micklethwaite", "Northcote", "Ormerod", "Postlethwaite",
               "Quarrington", "Rawcliffe", "Sowerby", "Thistlewood", "Umfreville", "Vavasour", "Wainwright",
               "Yardley", "Ackroyd", "Bannerman", "Calloway", "Dunwoody", "Eddington", "Farquharson",
               "Goodenough", "Hargreaves", "Inchbald", "Jolliffe", "Knatchbull", "Lightfoot", "Merriweather",
               "Nethercott", "Oldroyd", "Pickersgill", "Rainbird", "Scattergood", "Tollemache", "Uttley",
               "Vickerstaff", "Whitlock", "Ainsworth", "Brocklehurst", "Culpepper", "Dimbleby", "Everingham")
TRADE_FIRST = ("Gary", "Darren", "Shaun", "Wayne", "Lee", "Craig", "Dean", "Kev", "Stacey", "Bev", "Tina",
               "Mandy", "Deb", "Trev", "Nigel", "Clive", "Les", "Keith", "Barry", "Terry", "Ray", "Sharon",
               "Carole", "Brenda", "Duncan", "Graham", "Stuart", "Colin", "Derek", "Jackie")
TRADE_LAST = ("Mullins", "Cropper", "Stott", "Bagshaw", "Pilling", "Threlfall", "Butterworth", "Hindle",
              "Kershaw", "Nuttall", "Openshaw", "Pollitt", "Rigby", "Sutcliffe", "Tattersall", "Whittle",
              "Duckworth", "Entwhistle", "Horrocks", "Lomax", "Marsden", "Ramsbottom", "Schofield", "Walmsley",
              "Haworth", "Greenwood", "Crabtree", "Brierley", "Ashcroft", "Fazackerley", "Gaskell", "Heaton",
              "Isherwood", "Jagger", "Kenyon", "Leadbetter", "Moorhouse", "Noble", "Ogden", "Pickup")
VENUE_ADJ = ("Copper", "Crooked", "Golden", "Silver", "Wandering", "Hidden", "Painted", "Rusty", "Sleepy",
             "Jolly", "Drowsy", "Laughing", "Velvet", "Amber", "Whistling", "Tipsy", "Gilded", "Blue",
             "Scarlet", "Humble", "Brass", "Wild", "Quiet", "Merry", "Lucky", "Olive", "Emerald", "Honey",
             "Lantern", "Ivory")
VENUE_NOUN = ("Kettle", "Lantern", "Anchor", "Heron", "Fox", "Teapot", "Badger", "Pheasant", "Oak", "Pelican",
              "Thimble", "Otter", "Plough", "Sparrow", "Saddle", "Barrel", "Walrus", "Lobster", "Kestrel",
              "Acorn", "Compass", "Fiddle", "Mitre", "Bell", "Hare", "Swan", "Pudding", "Gate", "Quill",
              "Orchard")
VENUE_KIND = ("", "", "Inn", "Kitchen", "Rooms", "Bistro", "Tavern", "Brasserie")

REPAIRS = (   # an address's problem, fixed by a tradesperson (the answer)
    ("boiler service", "annual boiler check", "boiler",
     "yearly once-over of the heating unit", "annual look at what heats the radiators"),
    ("blocked drain", "drain that was blocked", "drain",
     "clogged waste pipe", "sink water refusing to go away"),
    ("damp patch in the bathroom", "bathroom damp", "bathroom damp",
     "mould creeping up the shower-room wall", "moisture stain by the shower"),
    ("broken garage door", "garage door that broke", "garage door",
     "jammed up-and-over entrance where the car lives", "car shed entrance that got stuck"),
    ("loose roof tiles", "roof tiles coming loose", "roof tiles",
     "slates slipping off the top of the house", "shingles coming adrift overhead"),
    ("faulty smoke alarm", "smoke alarm playing up", "smoke alarm",
     "fire detector chirping for no reason", "misbehaving fire detector"),
    ("dripping kitchen tap", "kitchen tap that drips", "kitchen tap",
     "faucet by the cooker that won't stop running", "cooker-side faucet trickling all night"),
    ("cracked window pane", "cracked window", "window pane",
     "split glazing in one of the frames", "glass with a split across it"),
    ("wobbly banister", "banister that wobbles", "banister",
     "loose handrail on the stairs", "stair rail shaking when you grab it"),
    ("tripped fuse box", "fuse box that keeps tripping", "fuse box",
     "consumer unit cutting the power", "breaker panel killing the electrics"),
    ("gutter clearing", "clearing the gutters", "gutters",
     "unclogging the rain channels along the eaves", "rainwater channel cleanout"),
    ("wasp nest removal", "getting rid of the wasp nest", "wasp nest",
     "stinging-insect colony taken out of the loft", "hornets evicted from the attic"),
)

BILLS = (     # an address's bill, with an amount (the answer)
    ("council tax", "council tax bill", "council tax",
     "local authority property charge", "municipal levy on the place"),
    ("water bill", "bill for the water", "water bill",
     "supply-and-sewerage charge", "utility charge for taps and sewerage"),
    ("home insurance renewal", "renewal of the home insurance", "home insurance",
     "buildings-and-contents cover premium", "premium for covering the house and belongings"),
    ("broadband contract", "broadband deal", "broadband",
     "fibre internet subscription", "monthly wifi package"),
    ("electricity bill", "bill for the electricity", "electricity",
     "power usage charges", "cost of the kilowatt-hours"),
    ("gas bill", "bill for the gas", "gas bill",
     "heating-fuel statement", "fuel charge for the hob and radiators"),
    ("TV licence", "television licence fee", "TV licence",
     "fee for permission to watch broadcasts", "broadcast viewing permit"),
    ("service charge", "building service charge", "service charge",
     "block's upkeep levy", "fee the managing agent takes for the block"),
    ("ground rent", "ground rent payment", "ground rent",
     "freeholder's annual land fee", "sum the freeholder charges us"),
    ("window cleaning", "window cleaner's fee", "window cleaning",
     "glazing-wash visits", "monthly glass-washing visits"),
    ("garden maintenance", "garden upkeep", "garden maintenance",
     "lawn and hedge care", "mowing and hedge trimming visits"),
    ("boiler cover plan", "boiler cover", "boiler cover",
     "heating breakdown insurance", "policy for when the radiators pack up"),
)

BOOKINGS = (  # a person's booking, with a confirmation code (the answer)
    ("train to the wedding", "train tickets for the wedding", "wedding train",
     "rail seats to see the couple tie the knot", "railway journey for the nuptials"),
    ("flight for the summer holiday", "summer holiday flights", "holiday flight",
     "plane seats for the August getaway", "airline tickets for the trip abroad in August"),
    ("ferry crossing", "ferry trip", "ferry",
     "boat passage across the water", "sailing across by ship"),
    ("campsite pitch", "pitch at the campsite", "campsite",
     "tent spot at the camping ground", "place to put up the tent"),
    ("hotel for the christening weekend", "hotel room for the christening", "christening hotel",
     "rooms to stay over for the baptism", "overnight stay for the baby's baptism"),
    ("theatre tickets", "tickets for the theatre", "theatre",
     "seats for the stage show", "places at the play"),
    ("airport parking", "parking at the airport", "airport parking",
     "car space at the terminal", "somewhere to leave the car while flying"),
    ("car hire", "hire car", "car hire",
     "rental vehicle", "motor we're renting"),
    ("cottage for the half-term break", "half-term cottage", "cottage",
     "countryside house for the school holiday week", "rural bolt-hole for the school holiday week"),
    ("pantomime tickets", "tickets for the panto", "pantomime",
     "seats at the festive stage show for kids", "Christmas children's show seats"),
    ("coach to the festival", "festival coach", "festival coach",
     "bus to the open-air music event", "shuttle to the outdoor gig"),
    ("sleeper train", "overnight sleeper", "sleeper",
     "night-time rail berth", "bunk on the rail journey through the night"),
)

OCCASIONS = ( # a person's gathering, at a venue (the answer)
    ("birthday dinner", "dinner for the birthday", "birthday",
     "meal for turning another year older", "evening meal marking another year of age"),
    ("christening lunch", "lunch after the christening", "christening lunch",
     "meal following the baptism", "midday meal once the baby's baptism is done"),
    ("retirement do", "retirement party", "retirement",
     "send-off for stopping work for good", "farewell for finishing their career"),
    ("leaving drinks", "drinks for leaving", "leaving drinks",
     "farewell pints before the job change", "goodbye round before they move employer"),
    ("baby shower", "shower for the baby", "baby shower",
     "gift afternoon for the mum-to-be", "celebration ahead of the new arrival"),
    ("graduation lunch", "lunch for the graduation", "graduation",
     "meal celebrating finishing the degree", "midday meal for getting their diploma"),
    ("engagement party", "party for the engagement", "engagement",
     "celebration of the proposal", "do marking that they're betrothed"),
    ("anniversary meal", "meal for the anniversary", "anniversary",
     "dinner marking years married", "celebration of their years as a couple"),
    ("book club evening", "evening of the book club", "book club",
     "monthly reading group", "reading circle get-together"),
    ("school reunion", "reunion of the school year", "school reunion",
     "get-together of former classmates", "catch-up with old classmates"),
    ("hen night", "hen do", "hen night",
     "bride's evening out with her friends", "bachelorette outing"),
    ("funeral wake", "wake after the funeral", "funeral",
     "reception after the burial", "remembrance drinks after the service"),
)

# The fact said in passing. Slots: {addr} {person} {name} (tradesperson) {amount} {code} {venue}, {topic}
# (the fact phrase), {kid} {partner}.
FACTS = {
    "repair": ("the {topic} at {addr} was sorted by {name}.",
               "{name} did the {topic} at {addr}, really tidy work.",
               "we had {name} round for the {topic} at {addr}.",
               "{addr}'s {topic} got fixed by {name} in the end."),
    "bill": ("the {topic} for {addr} came to {amount}.",
             "{addr}'s {topic} is {amount} this year.",
             "paid the {topic} at {addr}, {amount}, ouch.",
             "the {topic} on {addr} went up to {amount}."),
    "booking": ("{person}'s {topic} is booked, confirmation {code}.",
                "booked the {topic} for {person}, reference {code}.",
                "the {topic} for {person} is sorted, code {code}."),
    "venue": ("{person}'s {topic} is at the {venue}.",
              "we're doing {person}'s {topic} at the {venue}.",
              "booked the {venue} for {person}'s {topic}."),
}
FACT_LEADS = ("Oh, and ", "While I think of it: ", "Jotting this here: ", "Also, ", "")
FACT_TAILS = ("{partner} sorted most of it.", "One less thing to think about.", "", "",
              "{kid} is already asking about it.")
FACT_ACKS = {
    "repair": ("Good to have a name for next time: {name}.", "Great, glad that's done.",
               "Noted. Worth keeping their number handy."),
    "bill": ("Noted, {amount} for {addr}. Want me to compare it with last year?", "Ouch indeed. Noted for the records.",
             "Got that down for the file."),
    "booking": ("Saved: {code} for {person}.", "Lovely, that's one more thing sorted.",
                "Noted. Want a reminder the day before?"),
    "venue": ("The {venue}, lovely choice.", "Sounds like a nice spot.", "Noted, I'll remember where it is."),
}

# Small talk: the family by first name. Slots: {kid} {kid2} {partner} {pet} {dish} {show}.
KIDS = ("Maya", "Leo", "Ruby", "Finn")
PARTNERS = ("Sam",)
PETS = ("Biscuit", "Pickle")
DISHES = ("shepherd's pie", "fish fingers", "a stir fry", "spaghetti bolognese", "jacket potatoes",
          "a roast chicken", "veggie chilli", "pancakes")
SHOWS = ("that baking programme", "the detective series", "a nature documentary", "the quiz show",
         "a cartoon on repeat")
SMALLTALK = (
    "School run was chaos, {kid} forgot their PE kit again.",
    "{pet} got into the bin overnight, there was rubbish all over the kitchen floor.",
    "Made {dish} for tea and {kid2} actually ate it, small victories.",
    "We watched {show} last night, {partner} fell asleep halfway through.",
    "{kid} has a spelling test tomorrow and we're doing flashcards at the table.",
    "Raining again, the washing has been on the line for two days.",
    "{partner} is away for work so I'm doing bedtime solo this week.",
    "Took {pet} for a long walk by the river, came back covered in mud.",
    "{kid2} lost a tooth at breakfast and is now demanding a visit from the tooth fairy.",
    "The car made a funny noise on the way to swimming, hopefully nothing.",
)
SMALLTALK_REPLY = ("Sounds like a full day. What can I help with?", "Ha, classic. Anything on the list today?",
                   "That's family life. What do you need sorting?", "Hope the evening is calmer. What's next?")
GREETINGS = ("Evening! ", "Hi. ", "Hello again. ", "")

# Household chatter: the same addresses and people with other topics, never a fact's key. Slots: {addr}
# {person} {repair} {bill} {booking} {occasion} (fact phrases of topics that are not that entity's fact).
CHATTER_ADDR = ("Drove past {addr} on the school run, the hedge there is enormous now.",
                "The letter about the {bill} for {addr} arrived, haven't opened it yet.",
                "Someone needs to look at the {repair} at {addr} at some point.",
                "{addr} had a parcel left on the doorstep for ages, had to go and rescue it.")
CHATTER_PERSON = ("{person} texted about the {occasion}, no idea what to bring.",
                  "Bumped into {person} at the shops, we chatted for twenty minutes.",
                  "{person} might want the {booking} sorted too, I'll ask.",
                  "{person} sent photos of their new puppy, very cute.")
CHATTER_REPLY = ("Want me to add that to the list?", "Noted. Anything else on your mind?",
                 "I can remind you about that later if it helps.", "Sounds like a lot to juggle.")

# Questions. Close: the stored stems. Reworded: synonyms, other sentence shapes. Short: keywords.
# Slots: {addr} {person}, {close} (the close paraphrase), {rw} (a reworded phrase), {kw} (the keyword).
LONG_Q = {
    "repair": ("Who sorted the {close} at {addr}?", "Which tradesperson fixed the {close} at {addr}?",
               "Who did we have round for the {close} at {addr}?"),
    "bill": ("How much was the {close} for {addr}?", "What did the {close} at {addr} come to?",
             "How much did we pay for the {close} on {addr}?"),
    "booking": ("What's the confirmation code for {person}'s {close}?",
                "Which booking reference did we get for the {close} for {person}?",
                "What code came with {person}'s {close} booking?"),
    "venue": ("Where is {person}'s {close}?", "Which place did we book for {person}'s {close}?",
              "Where are we doing the {close} for {person}?"),
}
SHORT_Q = {"repair": "{addr} {kw} who", "bill": "{addr} {kw} amount", "booking": "{person} {kw} confirmation",
           "venue": "{person} {kw} venue"}
REWORDED_Q = {
    "repair": ("Which tradie dealt with the {rw} at {addr}?", "At {addr}, who handled the {rw}?",
               "The {rw} at {addr}: who was the person who came out for it?",
               "Remind me whose van turned up for the {rw} at {addr}."),
    "bill": ("What was the total of the {rw} at {addr}?", "At {addr}, what did we shell out for the {rw}?",
             "The {rw} for {addr}: how many pounds was it?", "Remind me what the {rw} at {addr} cost us."),
    "booking": ("What locator goes with the {rw} for {person}?",
                "For {person}, which reservation ID did the {rw} get?",
                "The {rw} we arranged for {person}: what's its locator?",
                "Remind me of {person}'s reservation number for the {rw}."),
    "venue": ("What place did we choose for {person}'s {rw}?", "For {person}'s {rw}, which establishment is it?",
              "The {rw} for {person}: where's that happening?",
              "Remind me of the pub or restaurant picked for {person}'s {rw}."),
}

# Out-of-domain negatives for a household: work and trades the family never discusses.
OOD = (
    ("What was the root cause of the payments API outage?", ("outage", "api")),
    ("Which pull request fixed the flaky integration test?", ("pull request", "integration test")),
    ("How much of the error budget did the checkout service burn this quarter?", ("error budget",)),
    ("Who is on call for the database cluster this week?", ("on call", "database")),
    ("What did the auditors say about the quarterly accounts?", ("auditor", "quarterly")),
    ("Which supplier won the tender for the warehouse racking?", ("tender", "warehouse")),
    ("What reject rate did the final inspection show on the assembly line?", ("reject", "assembly line")),
    ("What was the vibration reading on the main compressor?", ("compressor", "vibration")),
    ("When is the board meeting about the merger?", ("board meeting", "merger")),
    ("What grant did the lab apply for last spring?", ("grant", "lab")),
    ("Which journal accepted the paper on protein folding?", ("journal", "protein")),
    ("How many samples failed the centrifuge run?", ("centrifuge",)),
    ("What's the latency budget for the search endpoint?", ("latency", "endpoint")),
    ("Which Kubernetes node ran out of disk?", ("kubernetes",)),
    ("What did the client say about the invoice for the consulting work?", ("consulting",)),
    ("Which courier lost the pallet of spare parts?", ("pallet", "spare parts")),
    ("What is the torque setting for the wheel hub assembly?", ("torque",)),
    ("Who signed off the change request for the firewall rules?", ("firewall", "change request")),
    ("What was our net promoter score last quarter?", ("net promoter",)),
    ("Which patent did the competitor file?", ("patent", "competitor")),
    ("What was the sales forecast for the northern region?", ("sales forecast",)),
    ("How many tickets are open in the support queue?", ("support queue",)),
    ("Which shift had the forklift accident?", ("forklift",)),
    ("What's the SLA for restoring the backup servers?", ("sla", "backup server")),
    ("Who is presenting the keynote at the conference?", ("keynote", "conference")),
    ("What did the regulator fine the company for?", ("regulator",)),
    ("Which vendor supplies the SCADA software?", ("scada", "vendor")),
    ("How many units did the factory ship in March?", ("factory",)),
    ("What was the yield of the wheat harvest on the farm?", ("harvest", "wheat")),
    ("Which tanker delivered the crude oil?", ("tanker", "crude")),
    ("What was the verdict in the fraud trial?", ("verdict", "fraud")),
    ("Which ward is the patient on after surgery?", ("ward", "surgery")),
    ("What is the dosage for the clinical trial cohort?", ("clinical trial", "cohort")),
    ("How far did the rover drive on Mars?", ("rover", "mars")),
    ("What's the migration plan for the legacy mainframe?", ("mainframe",)),
    ("Who approved the budget for the marketing campaign?", ("marketing campaign",)),
    ("Which candidates made the shortlist for the engineering role?", ("shortlist", "engineering")),
    ("What was the bug in the billing microservice?", ("microservice",)),
    ("Which container ship is stuck at the port?", ("container ship",)),
    ("How many hectares did the wildfire burn?", ("wildfire", "hectare")),
    ("What did the investors ask about the runway?", ("investor", "runway")),
    ("Which spreadsheet has the payroll figures for the contractors?", ("payroll", "spreadsheet")),
    ("What did the safety inspector find at the quarry?", ("safety inspector",)),
    ("Which microscope is booked for the imaging session?", ("microscope",)),
    ("What was the outcome of the union negotiations?", ("union", "negotiation")),
    ("How many laptops does the IT department need to replace?", ("it department", "laptop")),
    ("Which sprint did the login feature slip to?", ("sprint", "login")),
    ("What was the throughput of the packaging line last shift?", ("throughput", "packaging line")),
    ("What did the structural engineer say about the bridge?", ("structural engineer", "bridge")),
    ("Which lawyer is handling the trademark dispute?", ("trademark",)),
)
