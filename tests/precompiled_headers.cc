// The translation unit that builds the tests' precompiled header (tests/CMakeLists.txt): the
// tests reuse it, so it holds nothing of its own.
