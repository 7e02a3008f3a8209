import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { MEDIA_RPC, type MediaListReply, mediaListRequestSchema } from '@tessera/contracts';
import { ResourcesService } from './resources.service';

/** Metadata queries over Redis RPC (libs/contracts `media.ts`); the bytes go over internal HTTP. */
@Controller()
export class ResourcesRpcController {
  constructor(private readonly resources: ResourcesService) {}

  @MessagePattern(MEDIA_RPC.LIST)
  async list(@Payload() payload: unknown): Promise<MediaListReply> {
    const request = mediaListRequestSchema.parse(payload);
    const items = await this.resources.list({
      tenantId: request.productId,
      applicantId: request.applicantId,
      enrollmentId: request.enrollmentId,
      kind: request.kind,
      activity: request.activity,
    });
    return { items };
  }
}
