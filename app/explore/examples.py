"""Ready-made example sets for the explorer: polysemous English words with sense labels.

Each set is plain text in the explorer's input syntax: one sentence per line, an optional
``[sense]`` label in front. The sentences are our own, except the two "play" sentences marked
below, which are the source sentences of Table 4 in Peters et al. (2018), "Deep contextualized word
representations" (a play in a baseball game vs. a play on Broadway).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExampleSet:
    name: str  # short key, also used in shared links (?ex=bank)
    word: str  # target word selected when the set is loaded
    title: str  # one line shown in the picker
    text: str  # input text, one labelled sentence per line


_BANK = """\
[river] We sat on the bank of the river and watched the boats go by.
[river] The flood washed away part of the east bank.
[river] Willows grow thickly along the bank of the stream.
[river] She pulled the canoe up onto the muddy bank.
[river] Fishermen lined the bank from dawn until dusk.
[river] The path follows the south bank for two miles.
[money] I need to go to the bank to deposit this cheque.
[money] The bank raised its interest rates again this month.
[money] He works as a clerk at a small bank in the city.
[money] She opened a savings account at the local bank.
[money] The central bank warned that inflation is still too high.
[money] Robbers broke into the bank late on Friday night.
"""

_PLAY = """\
[baseball] Chico Ruiz made a spectacular play on Alusik's grounder.
[baseball] The shortstop turned a brilliant double play to end the inning.
[baseball] The umpire reviewed the play at second base.
[baseball] It was the best defensive play of the whole season.
[baseball] A sloppy play in the ninth inning cost them the game.
[baseball] The catcher was injured on a close play at the plate.
[theatre] Olivia De Havilland signed to do a Broadway play for Garson.
[theatre] The new play opens on Broadway next month.
[theatre] We saw a play by Shakespeare at the open-air theatre.
[theatre] The critics loved the play, especially the second act.
[theatre] She wrote her first play while she was still at school.
[theatre] The school put on a play about the history of the town.
[verb] The children play in the garden after lunch.
[verb] He learned to play the piano when he was six.
[verb] They play football every Saturday morning.
"""

_SPRING = """\
[season] The cherry trees blossom in early spring.
[season] We plan to visit Japan next spring.
[season] Spring arrived late this year after a long winter.
[season] The birds return to the marsh every spring.
[season] The lambs were born in the spring of that year.
[water] A cold spring bubbles up from the rocks.
[water] The village took its water from a spring on the hill.
[water] Hot spring baths are popular in this valley.
[water] The stream begins at a spring high in the mountains.
[coil] The old mattress had a broken spring.
[coil] A steel spring pushes the lid open.
[coil] The watch stopped because the spring was wound too tight.
[coil] He replaced the spring in the door hinge.
"""

_CELL = """\
[biology] Each cell contains a nucleus and many mitochondria.
[biology] The virus enters the cell through a receptor on its surface.
[biology] Red blood cells carry oxygen around the body.
[biology] A single cell divides to form two daughter cells.
[biology] The stem cell can become almost any kind of tissue.
[prison] The prisoner spent the night in a small cell.
[prison] The guard locked the cell door behind him.
[prison] He shared a cell with two other inmates.
[prison] The monk slept in a bare stone cell.
[phone] My cell phone battery died during the call.
[phone] Call me on my cell when you land.
[phone] She gave him her cell number.
[battery] A solar cell turns sunlight into electricity.
[battery] The fuel cell powers the bus for a whole day.
"""

_MATCH = """\
[game] The match ended in a draw after extra time.
[game] She won the tennis match in three sets.
[game] Thousands of fans came to watch the match.
[game] The boxing match was stopped in the fifth round.
[game] They lost the final match of the season.
[fire] He struck a match to light the candle.
[fire] The match went out in the wind.
[fire] She kept a box of matches by the stove.
[fire] A single match can start a forest fire.
[equal] The curtains are a perfect match for the sofa.
[equal] The new player was no match for the champion.
[equal] The police found a match for the fingerprints.
[equal] Their skills are a good match for the job.
"""

_LIGHT = """\
[illumination] Turn on the light, it is getting dark.
[illumination] The light from the window fell across the desk.
[illumination] Plants need light to grow.
[illumination] The light at the end of the tunnel grew brighter.
[illumination] The traffic light turned red.
[weight] The box was light enough for a child to carry.
[weight] She packed a light bag for the weekend.
[weight] He prefers a light breakfast.
[weight] The new bicycle frame is very light.
[ignite] Please light the fire before the guests arrive.
[ignite] He tried to light a cigarette in the rain.
[ignite] They light candles on the windowsill every winter.
[pale] She wore a light blue dress.
[pale] The walls were painted a light grey.
"""

EXAMPLE_SETS: dict[str, ExampleSet] = {
    s.name: s
    for s in (
        ExampleSet("bank", "bank", "bank: river side vs. money", _BANK),
        ExampleSet("play", "play", "play: baseball vs. Broadway (ELMo paper, Table 4) vs. verb", _PLAY),
        ExampleSet("spring", "spring", "spring: season vs. water source vs. coil", _SPRING),
        ExampleSet("cell", "cell", "cell: biology vs. prison vs. phone vs. battery", _CELL),
        ExampleSet("match", "match", "match: game vs. fire vs. equal", _MATCH),
        ExampleSet("light", "light", "light: illumination vs. weight vs. ignite vs. pale", _LIGHT),
    )
}
DEFAULT_EXAMPLE = "play"


def find_example(text: str) -> ExampleSet | None:
    """The example set whose text equals ``text`` (ignoring surrounding whitespace), if any."""
    stripped = text.strip()
    for example in EXAMPLE_SETS.values():
        if example.text.strip() == stripped:
            return example
    return None
