# Source files a program carries inside itself (web pages, scripts, strings, Lua), kept as
# their own files in the tree (so linters and translators see them) and turned into one C++
# source at build time:
#
#   anteroom_embed(TARGET target FUNCTION ns::name HEADER path/of.h FILES a b ...)
#
# adds to `target` a generated source defining `std::string_view name(std::string_view path)`
# in namespace `ns`, declared in HEADER, which returns the bytes of a listed file by its path
# from the top of the tree ("web/wait/page.js"), and aborts for any other path (a programming
# error a test catches); `std::vector<std::string_view> name_paths()` lists the paths (tests
# compare them with the tree). The files become raw string literals; one that holds the literal's
# delimiter is refused at build time.
function(anteroom_embed)
  cmake_parse_arguments(E "" "TARGET;FUNCTION;HEADER" "FILES" ${ARGN})
  string(MAKE_C_IDENTIFIER "${E_FUNCTION}" id)
  set(out "${CMAKE_CURRENT_BINARY_DIR}/embedded_${id}.cc")
  set(inputs "")
  foreach(f IN LISTS E_FILES)
    list(APPEND inputs "${PROJECT_SOURCE_DIR}/${f}")
  endforeach()
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DFUNCTION=${E_FUNCTION} -DHEADER=${E_HEADER}
            -DROOT=${PROJECT_SOURCE_DIR} "-DFILES=${E_FILES}"
            -P "${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake"
    DEPENDS ${inputs} "${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake"
    COMMENT "Embedding ${E_FUNCTION}'s files"
    VERBATIM)
  target_sources(${E_TARGET} PRIVATE "${out}")
endfunction()
