"""Given names people commonly bear, in Latin letters, lowercased. Pure data.

What it is for: a name of one or two consonants written one vowel off a name memory holds is
either a respelling of it (Juhn for John, Tym for Tim) or another person (Tom and Tim, Ben and
Bin, Dan and Don). A spelling that is itself a common name is taken for its own person; one that
no list of names knows, for a respelling (text/spelling.py). The list is of the short and
medium names where the two readings collide; a longer name is told by its consonants alone.
"""

from __future__ import annotations

GIVEN = frozenset("""
aaron abby abe abel ada adam adan adel adele aden adi adil adin adina agnes ahmad ahmed aida aidan aiden aiko
aimee aisha ajay al alan alana albert alec alex alexa alfie ali alia alice alina alisa alison allan allen ally
alma alva alvin aly alyssa amal amara amber ami amie amin amina amir amit amos amy ana anders andre andrea andy
angel angela angie anil anita anja ann anna anne annie ansel anton april arden ari aria ariel arlo arman arnie
aron art arthur arun asa asha ashley asif asma aston ava avery axel aya ayan ayesha aziz
babs bart basil bea beau becky bee bela ben benny bern bert beth betsy betty bev bill billy bo bob bobby bonnie
brad brett brian bruce bryn bud buddy burt
cal cale caleb callie cam cara carl carla carly carmen carol cary casey cass cat cathy cecil celia chad
chen chi chris cindy claire clara clark cleo cliff clint cody cole colin connie cora corey craig cruz
dale dallas dan dana dane dani danny dara darcy daria darin dave davey david dawn dean deb debbie dee del della
demi den dena denis denny derek des desi dev devi devin dewey dex di diana diane dick dina dino dion dirk dixie
dom don donna dora doris dot doug drew duke dylan
earl ed eddie eden edie edna eli elia elias elise eliza ella ellen ellie elmo elsa elsie emil emily emma emmy
ena enzo eric erica erik erin ernie esme esta ethan etta eva evan eve ezra
faye fay fern finn flo floyd fran frank fred freda
gabe gail gale gary gavin gene geo gia gigi gil gina glen glenn grace greg gus guy gwen
hal hana hank hanna hannah hans hari harry hazel heidi helen herb hope hugh hugo hui
ian ida ike ila ilse ina inez ira iris irma isa isla ivan ivo ivy
jack jackie jada jade jake jan jana jane janet janie jay jean jed jeff jen jenna jenny jess jill jim jimmy jin
jo joan joann joanna joanne jodi jody joe joel joey john johnny jon jonah jonas jose josh joy juan jude judy
jules julia julie jun june
kai kali kara karen kari karl kat kate kathy katie kay kaye kean keith ken kenji kenny kent kim kira kirk kit
kobe kofi kris kurt kyle kyra
lana lance lane lara larry lea leah lee leila lena leo leon les levi lex li lia liam lila lily lin lina linda
ling lisa liz liza lois lola lon lora lori lou luca lucy luis luke lulu luna lyle lynn
mac mack mae mai maia mal mara marc marco mari maria marie mario mark mary mason mat max maya meg mei mel mia
mick mike mila milo min ming mira mo moe mohan molly mona morgan moses myra
nan nana nancy nat nate ned neil nell nia nick nico nika nina noah noel nora norm
ola olga oli omar omer opal oren orla oscar otis otto owen
pam pat patty paul paula pedro peg peggy penny pete phil pia piper polly
quinn
rae raj rama rami ramon randy rani ravi ray reba reed reese rem ren rex rhea rhys rick ricky rita rob robin
rod roger ron rory rosa rose ross roy ruby rudy russ ruth ryan
sal sally sam sami sammy sana sara sarah saul scott sean seth shay shea sid silas sima simon sol sonia sonny
stan sue sui sunny susan suzy
tad tam tami tammy tara ted teddy tess tia tim tina toby todd tom tommy toni tony tori troy ty
uma una uri
val vera vic vince viv
wade walt wanda ward wei wes will willa wyatt
yan yara yoko yu yuki yun yuri yusuf
zach zack zane zara zeke zia zoe zoey
""".split())
