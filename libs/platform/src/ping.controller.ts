import { Controller, type Type } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import { RPC, type PingReply } from '@tessera/contracts';

/** Builds the RPC responder for `<service>.ping.v1`; the pattern names the service, so it is made per app. */
export function pingController(service: string): Type<unknown> {
  @Controller()
  class PingController {
    @MessagePattern(RPC.PING(service))
    ping(): PingReply {
      return { service, at: new Date().toISOString() };
    }
  }
  return PingController;
}
