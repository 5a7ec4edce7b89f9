# Writes the manual pages into OUT_DIR from the built binary's --help, so a page says what
# --help says: gpufabric(1) from `BIN --help`, and gpufabric-CMD(1) from `BIN CMD --help` for
# every subcommand that `BIN --help` lists. help2man (HELP2MAN) turns each into troff; GZIP
# compresses them as Debian installs manual pages.
#
#   cmake -DBIN=build/gpufabric -DOUT_DIR=build/man -DVERSION=0.1.0 -DHELP2MAN=/usr/bin/help2man
#         -DGZIP=/usr/bin/gzip -DSRC_DIR=. -P cmake/man_pages.cmake
#
# The pages' date is the last commit's (SOURCE_DATE_EPOCH, which help2man reads, unless already
# set), so a rebuild of the same commit writes the same pages.
file(REMOVE_RECURSE "${OUT_DIR}")
file(MAKE_DIRECTORY "${OUT_DIR}/wrappers")

if(NOT DEFINED ENV{SOURCE_DATE_EPOCH})
  find_program(GIT git)
  if(GIT)
    execute_process(COMMAND ${GIT} -C ${SRC_DIR} log -1 --format=%ct
                    OUTPUT_VARIABLE epoch RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE
                    ERROR_QUIET)
    if(rc EQUAL 0 AND epoch MATCHES "^[0-9]+$")
      set(ENV{SOURCE_DATE_EPOCH} "${epoch}")
    endif()
  endif()
endif()

execute_process(COMMAND "${BIN}" --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${BIN} --help failed (${rc})")
endif()

# The subcommands and their one-line descriptions, from the "Subcommands:" section.
string(REGEX MATCH "\nSubcommands:\n(.*)" _ "${help}")
string(REGEX REPLACE "\n\n.*" "" listing "${CMAKE_MATCH_1}")
string(REPLACE "\n" ";" lines "${listing}")
set(commands "")
foreach(line IN LISTS lines)
  if(line MATCHES "^  ([a-z][a-z0-9-]*)  +(.*)$")
    list(APPEND commands "${CMAKE_MATCH_1}")
    set(summary_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
  endif()
endforeach()
if(NOT commands)
  message(FATAL_ERROR "no subcommands in `${BIN} --help`")
endif()

# A page's NAME line: its description up to the first '; ', ': ' or '. ' (or its end).
function(short_summary text out)
  string(REGEX REPLACE "(; |: |\\. ).*" "" text "${text}")
  string(REGEX REPLACE "\\.$" "" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

function(write_page program description see_also)
  file(WRITE "${OUT_DIR}/wrappers/${program}.h2m" "[SEE ALSO]\n${see_also}\n")
  execute_process(
    COMMAND "${HELP2MAN}" --no-info --no-discard-stderr "--version-string=${VERSION}"
            "--source=gpufabric ${VERSION}"
            "--name=${description}" "--include=${OUT_DIR}/wrappers/${program}.h2m"
            "--output=${OUT_DIR}/${program}.1" "${OUT_DIR}/wrappers/${program}"
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "help2man failed on ${program} (${rc})")
  endif()
  execute_process(COMMAND "${GZIP}" -9nf "${OUT_DIR}/${program}.1" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip failed on ${program}.1 (${rc})")
  endif()
endfunction()

# help2man runs `PROGRAM --help` and names the page after PROGRAM: one small script per page,
# named as the page, runs the binary.
set(refs "")
foreach(cmd IN LISTS commands)
  list(APPEND refs "\\fBgpufabric-${cmd}\\fR(1)")
endforeach()
list(JOIN refs ",\n" all_refs)

file(WRITE "${OUT_DIR}/wrappers/gpufabric" "#!/bin/sh\nexec \"${BIN}\" \"$@\"\n")
file(CHMOD "${OUT_DIR}/wrappers/gpufabric" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
string(REGEX MATCH "^gpufabric: ([^\n]*)" _ "${help}")
short_summary("${CMAKE_MATCH_1}" main_summary)
write_page(gpufabric "${main_summary}"
           "Each subcommand's page: ${all_refs}.\nEvery page is its command's --help.")

foreach(cmd IN LISTS commands)
  set(program "gpufabric-${cmd}")
  file(WRITE "${OUT_DIR}/wrappers/${program}" "#!/bin/sh\nexec \"${BIN}\" ${cmd} \"$@\"\n")
  file(CHMOD "${OUT_DIR}/wrappers/${program}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
  short_summary("${summary_${cmd}}" summary)
  write_page(${program} "${summary}" "\\fBgpufabric\\fR(1)")
endforeach()
file(REMOVE_RECURSE "${OUT_DIR}/wrappers")
