// The fsmonitor hook git runs during status, written into the store by fsmonitor.ts.
export const FSMONITOR_HOOK = String.raw`#!/usr/bin/perl
# git's fsmonitor hook (protocol version 2), answered by Watchman. Arguments: the watchman
# program, the watched root, a file to create when Watchman no longer watches it, then git's "2"
# and the token of its previous query. Prints the new token, then the paths changed since the
# old one, NUL-separated; "/" alone means "assume everything changed" (a first query, a
# restarted Watchman), and git then checks every file itself, as it does when this fails.
# With no daemon, the client answers a query itself (Watchman 4.9's --no-spawn) from a crawl of
# its own, with a clock of process id 0, and from such a clock it claims that nothing changed:
# that answer counts as a lost watch (git checks every file), and so the next snapshot starts
# the daemon and the watch again. A fresh instance (a restarted daemon) creates that file too.
# Plain Perl with no modules: loading JSON::PP alone would cost 30 ms per status.
use strict;
use warnings;

my ($watchman, $root, $lost, $version, $since) = @ARGV;
exit 1 unless defined $version && $version eq '2';
$since = '' unless defined $since;

sub quote {
  my ($s) = @_;
  $s =~ s/(["\\])/\\$1/g;
  $s =~ s/([\x00-\x1f])/sprintf('\\u%04x', ord($1))/ge;
  return "\"$s\"";
}

sub ask {
  my ($query) = @_;
  pipe(my $from, my $to) or return undef;
  my $pid = open(my $out, '-|');
  return undef unless defined $pid;
  if ($pid == 0) {
    close $to;
    open(STDIN, '<&', $from) or exit 127;
    open(STDERR, '>', '/dev/null');
    exec($watchman, '--no-spawn', '-j', '--no-pretty') or exit 127; # never starts the daemon itself
  }
  close $from;
  print {$to} $query;
  close $to;
  local $/;
  my $reply = <$out>;
  close $out;
  return $? == 0 ? $reply : undef;
}

# One JSON string (the text between its quotes) to bytes.
sub unquote {
  my ($s) = @_;
  $s =~ s/\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})/
    chr(0x10000 + ((hex($1) - 0xD800) << 10) + (hex($2) - 0xDC00))/ge;
  $s =~ s/\\(?:u([0-9a-fA-F]{4})|(.))/
    defined $1 ? chr(hex $1) : ($2 eq 'n' ? "\n" : $2 eq 't' ? "\t" : $2 eq 'r' ? "\r" :
      $2 eq 'b' ? "\b" : $2 eq 'f' ? "\f" : $2)/ge;
  utf8::encode($s);
  return $s;
}

my $string = qr/"((?:[^"\\]|\\.)*)"/s;

sub everything {
  my ($clock) = @_;
  print $clock, "\0/";
  exit 0;
}

# Whether a clock is a daemon's: c:START:PID:ROOT:TICKS, where only a client alone says PID 0.
sub daemon {
  my ($clock) = @_;
  return $clock =~ /^c:[0-9]+:[1-9][0-9]*:/;
}

sub mark {
  if (open(my $mark, '>', $lost)) { close $mark; }
}

sub lost {
  mark();
  exit 1;
}

if ($since !~ /^c:[0-9:]+$/) {
  my $reply = ask('["clock", ' . quote($root) . ', {"sync_timeout": 20000}]');
  lost() unless defined $reply && $reply =~ /"clock":\s*$string/;
  my $clock = unquote($1);
  lost() unless daemon($clock);
  everything($clock);
}

my $reply = ask('["query", ' . quote($root) . ', {"since": ' . quote($since)
  . ', "fields": ["name"], "empty_on_fresh_instance": true'
  . ', "expression": ["not", ["dirname", ".git"]]}]');
lost() unless defined $reply && $reply !~ /"error":/ && $reply =~ /"clock":\s*$string/;
my $clock = unquote($1);
lost() unless daemon($clock);
if ($reply =~ /"is_fresh_instance":\s*true/) {
  mark();
  everything($clock);
}
exit 1 unless $reply =~ /"files":\s*\[/g;
my @names;
while ($reply =~ /\G\s*$string\s*,?/gc) { push @names, unquote($1); }
exit 1 unless $reply =~ /\G\s*\]/gc;
print $clock, "\0", join("\0", @names);
exit 0;
`;
