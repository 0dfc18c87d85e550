// Compiles the precompiled header that every test executable reuses (doctest_main.cpp cannot).
