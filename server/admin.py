"""AdminService: registering bots, creating matches, waiting for results (admin token required),
the referee's proof that it holds that token (ProveReferee: none required), revoking a bot (its
owner's token will do), and registering one without a token when the operator opened it."""

from __future__ import annotations

from croupier.server.audience import client_of
from croupier.server.group import read_addresses
from croupier.server.referee import Referee, tokens_of
from croupier.server.registration import Admissions, OpenRegistration
from croupier.v1 import admin_pb2, match_pb2
from croupier.wire.errors import Context, FailedPrecondition, InvalidArgument, Unauthenticated
from croupier.wire.names import name_problem
from croupier.wire.proof import NONCE_BYTES, listens_at, referee_proof


class AdminService:
    def __init__(self, referee: Referee, open_registration: OpenRegistration | None = None) -> None:
        self.referee = referee
        self.admissions = Admissions(open_registration) if open_registration is not None else None
        """Open registrations of the last hour; None: RegisterBot needs the admin token."""

    async def RegisterBot(
        self, request: admin_pb2.RegisterBotRequest, context: Context
    ) -> admin_pb2.RegisterBotResponse:
        tokens = tokens_of(context)
        if tokens or self.admissions is None:
            if not tokens:
                raise Unauthenticated(
                    "this referee takes no open registrations: RegisterBot needs the admin token "
                    "as croupier-token metadata (ask the arena's organiser)"
                )
            self.referee.check_admin(tokens)
            bot, token = self.referee.register_bot(
                request.name,
                request.bot_id,
                request.token,
                claim=request.claim,
                owner_token=request.owner_token,
            )
            return admin_pb2.RegisterBotResponse(bot_id=bot.bot_id, token=token)
        if request.bot_id or request.token:
            raise InvalidArgument(
                "an open registration gives a name alone: the referee picks the id and token"
            )
        problem = name_problem(request.name)
        if problem is not None:
            raise InvalidArgument(f"bot name {problem}")
        address = client_of(context.peer())
        self.admissions.check(address)
        bot, token = self.referee.register_bot(request.name, claim=True, owner_token=request.owner_token)
        self.admissions.count(address)
        return admin_pb2.RegisterBotResponse(bot_id=bot.bot_id, token=token)

    async def RevokeBot(
        self, request: admin_pb2.RevokeBotRequest, context: Context
    ) -> admin_pb2.RevokeBotResponse:
        """The bot's own token, its owner's or the admin's: checked by the referee."""
        bot = self.referee.revoke_bot(request.bot_id, tokens_of(context))
        return admin_pb2.RevokeBotResponse(bot_id=bot.bot_id, name=bot.name)

    async def ListBots(
        self, request: admin_pb2.ListBotsRequest, context: Context
    ) -> admin_pb2.ListBotsResponse:
        self.referee.check_admin(tokens_of(context))
        return admin_pb2.ListBotsResponse(bots=self.referee.bot_summaries())

    async def CreateMatch(
        self, request: admin_pb2.CreateMatchRequest, context: Context
    ) -> admin_pb2.CreateMatchResponse:
        self.referee.check_admin(tokens_of(context))
        match, tokens = await self.referee.create_match(request)
        return admin_pb2.CreateMatchResponse(
            match=match.info(),
            seat_tokens=tokens,
            referee=self.referee.address,
            journal=str(match.journal_path),
        )

    async def GetMatch(self, request: admin_pb2.GetMatchRequest, context: Context) -> match_pb2.MatchInfo:
        self.referee.check_admin(tokens_of(context))
        return self.referee.info(request.match_id)

    async def WaitMatch(self, request: admin_pb2.GetMatchRequest, context: Context) -> match_pb2.MatchInfo:
        self.referee.check_admin(tokens_of(context))
        match = self.referee.matches.get(request.match_id)
        if match is None:
            return self.referee.info(request.match_id)
        await match.done.wait()
        return match.info()

    async def CancelMatch(
        self, request: admin_pb2.CancelMatchRequest, context: Context
    ) -> match_pb2.MatchInfo:
        self.referee.check_admin(tokens_of(context))
        return await self.referee.cancel_match(request.match_id, request.reason)

    async def ProveReferee(
        self, request: admin_pb2.ProveRefereeRequest, context: Context
    ) -> admin_pb2.ProveRefereeResponse:
        """No token wanted: the proof is how a caller holding it knows whom it would send it to."""
        low, high = NONCE_BYTES
        if not low <= len(request.nonce) <= high:
            raise InvalidArgument(f"a nonce of {low} to {high} bytes, please")
        referee = self.referee
        if not request.address:
            raise InvalidArgument("name the exact address you dialled (address: IP:PORT)")
        if not listens_at(referee.bound_host, referee.port, request.address):
            # a relay's caller dialled an address that is not this referee's: prove nothing to it
            raise FailedPrecondition(f"this referee does not listen at {request.address[:60]!r}")
        proof = referee_proof(referee.admin_token_sha256, request.address, request.nonce)
        return admin_pb2.ProveRefereeResponse(proof=proof)

    async def GetReferee(
        self, request: admin_pb2.GetRefereeRequest, context: Context
    ) -> admin_pb2.RefereeInfo:
        self.referee.check_admin(tokens_of(context))
        siblings = self.referee.siblings
        return admin_pb2.RefereeInfo(
            address=self.referee.address,
            instance=self.referee.instance,
            workers=read_addresses(siblings.root) if siblings is not None else [],
        )
