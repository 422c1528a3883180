package observe

// RaceEnabled tells the external tests (package observe_test) what raceEnabled tells these.
const RaceEnabled = raceEnabled
